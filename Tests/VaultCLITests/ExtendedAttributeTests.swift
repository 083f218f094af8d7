import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Extended attributes and ACLs (issue 44): `user.*`, a file capability
/// (`security.capability`, as root), an access and a default ACL
/// (`system.posix_acl_*`) are backed up, restored byte for byte, and seen
/// by diff; where the target refuses some, the refusal is named once.
@Suite struct ExtendedAttributeTests {
    let f: BackupFixture
    init() throws { f = try BackupFixture() }

    static let python = """
        import os, sys
        if sys.argv[1] == "set":
            os.setxattr(sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4]), follow_symlinks=False)
        else:
            root = sys.argv[2]
            for d, dirs, files in os.walk(root):
                for n in sorted(dirs + files):
                    p = os.path.join(d, n)
                    for a in sorted(os.listxattr(p, follow_symlinks=False)):
                        print(os.path.relpath(p, root), a, os.getxattr(p, a, follow_symlinks=False).hex())
        """

    func py(_ args: [String]) throws -> CLIHarness.Result {
        try CLIHarness.run(["python3", "-c", Self.python] + args, environment: f.v.environment(), cwd: f.v.path, timeout: 30, executable: "/usr/bin/env")
    }
    func set(_ path: String, _ name: String, _ value: [UInt8]) throws {
        let r = try py(["set", f.source + "/" + path, name, value.map { String(format: "%02x", $0) }.joined()])
        #expect(r.status == 0, "\(name) on \(path): \(r.stderr)")
    }
    func inventory(_ root: String) throws -> [String] { try py(["list", root]).stdoutText.split(separator: "\n").map(String.init) }

    // Linux's posix_acl_xattr: version 2, then (tag, perm, id) little-endian.
    static func acl(_ entries: [(tag: UInt16, perm: UInt16, id: UInt32)]) -> [UInt8] {
        var out: [UInt8] = [2, 0, 0, 0]
        for e in entries {
            out += [UInt8(e.tag & 0xff), UInt8(e.tag >> 8), UInt8(e.perm), 0]
            out += withUnsafeBytes(of: e.id.littleEndian, Array.init)
        }
        return out
    }
    static let any = UInt32.max
    /// u::rw-, u:65534:r--, g::r--, m::r--, o::---
    static let fileACL = acl([(1, 6, any), (2, 4, 65534), (4, 4, any), (0x10, 4, any), (0x20, 0, any)])
    /// u::rwx, g::r-x, o::r-x
    static let defaultACL = acl([(1, 7, any), (4, 5, any), (0x20, 5, any)])
    /// VFS_CAP_REVISION_2 | effective, CAP_NET_BIND_SERVICE permitted.
    static let capability: [UInt8] = [1, 0, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    func populate() throws {
        try f.mkdir("d")
        try f.write("d/tagged", Array("t\n".utf8))
        try f.write("d/shared", Array("s\n".utf8), mode: 0o640)
        try f.write("d/tool", Array("#!/bin/sh\n".utf8), mode: 0o755)
        try set("d/tagged", "user.comment", Array("from the test".utf8))
        try set("d/tagged", "user.empty", [])
        try set("d/shared", "system.posix_acl_access", Self.fileACL)
        try set("d", "system.posix_acl_default", Self.defaultACL)
        try set("d", "user.dir", [1, 2, 3])
        if getuid() == 0 { try set("d/tool", "security.capability", Self.capability) }
    }

    @Test func attributesAndACLsComeBackAndDiffSeesThem() throws {
        try populate()
        let before = try inventory(f.source)
        #expect(before.contains { $0.hasPrefix("d system.posix_acl_default ") } && before.contains { $0.hasPrefix("d/shared system.posix_acl_access ") })
        try f.backup()
        let r = try f.snapshots(["restore", "latest", "--to", f.v.path + "/out"])
        #expect(r.status == 0 && !r.stderr.contains("extended attributes"), "\(r.stderr)")
        #expect(try inventory(f.v.path + "/out/src") == before)
        // A changed attribute (the content and mtime as they were) is a change.
        try set("d/tagged", "user.comment", Array("changed".utf8))
        try f.backup()
        let ids = (try JSONObject.parse(try f.snapshots(["list", "--json"]).stdout)["snapshots"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let d = try f.snapshots(["diff", ids[0], ids[1]])
        #expect(d.status == 0 && d.stdoutText.contains("M ") && d.stdoutText.contains("d/tagged"), "\(d.stdoutText)\(d.stderr)")
    }

    /// Restored by a user who may not set `security.*`: the content and
    /// the other attributes come back, and the refusal is one line.
    @Test(.enabled(if: getuid() == 0))
    func aRefusalIsNamedOnce() throws {
        try populate()
        try f.write("d/tool2", [1], mode: 0o755)
        try set("d/tool2", "security.capability", Self.capability)
        try f.backup()
        #expect(try f.snapshots([]).status == 0)
        let v = f.v
        let setup = try CLIHarness.run(["sh", "-c", "chmod 0755 . && cp -r vault copy && chmod -R a+rX copy && cp password pw-nobody && chmod 0644 pw-nobody"
                                        + " && mkdir home-nobody out-nobody && chown nobody home-nobody out-nobody"],
                                       environment: v.environment(), cwd: v.path, executable: "/usr/bin/env")
        #expect(setup.status == 0, "\(setup.stderr)")
        let r = try CLIHarness.run(["runuser", "-u", "nobody", "--", "env", "HOME=\(v.path)/home-nobody", "VAULT_ALLOW_WEAK_KDF=1",
                                    CLIHarness.binary, "--vault", v.path + "/copy", "--password-file", v.path + "/pw-nobody",
                                    "snapshots", "restore", "latest", "--to", v.path + "/out-nobody"],
                                   environment: v.environment(), cwd: v.path, timeout: 60, executable: "/usr/bin/env")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").filter { $0.contains("extended attributes") }
        #expect(lines == ["vault: warning: the security.* extended attributes of 2 entries were not restored: operation not permitted"], "\(r.stderr)")
        let got = try inventory(v.path + "/out-nobody/src")
        #expect(got.contains { $0.hasPrefix("d/tagged user.comment ") } && got.contains { $0.hasPrefix("d/shared system.posix_acl_access ") })
        #expect(!got.contains { $0.contains("security.capability") })
    }

    /// A folder item (`vault add FOLDER`, a pax stream) keeps them too.
    @Test func aFolderItemKeepsThem() throws {
        try populate()
        let before = try inventory(f.source + "/d")
        #expect(before.count == 4, "\(before)")
        #expect(try f.v.add(["add", f.source + "/d"]).status == 0)
        let r = try f.v.run(["restore", "d", "--to", f.v.path + "/folder"])
        #expect(r.status == 0 && !r.stderr.contains("extended attributes"), "\(r.stderr)")
        #expect(try inventory(f.v.path + "/folder/d") == before)
    }
}

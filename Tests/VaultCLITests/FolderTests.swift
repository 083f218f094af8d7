import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Folders as items: add, list, restore an identical tree, `get | tar -t`,
/// never overwrite; and hostile archives put into the vault (with the
/// reference drop-in writer, since the CLI never makes such an archive) are
/// refused by `restore`, leaving nothing behind.
@Suite struct FolderTests {
    let v: VaultFixture
    init() throws { v = try VaultFixture() }

    static let dropIn = CLIHarness.packageRoot + "/scripts/reference/vault_dropin.py"

    /// One entry of a tree: kind, permission bits, mtime (whole seconds), and
    /// the content's SHA-256 or the link target.
    struct Node: Equatable, CustomStringConvertible {
        var kind: Character, mode: mode_t, mtime: Int, what: String
        var description: String { "\(kind) \(String(mode, radix: 8)) \(mtime) \(what)" }
    }

    /// Every path under `root` (relative; "" is the root itself), never
    /// following a symbolic link.
    static func snapshot(_ root: String) throws -> [String: Node] {
        var out: [String: Node] = [:]
        func walk(_ rel: String) throws {
            let path = rel.isEmpty ? root : root + "/" + rel
            var st = stat()
            guard lstat(path, &st) == 0 else { throw Failure("lstat \(path): \(errno)") }
            let mode = st.st_mode & 0o7777, mtime = Int(st.st_mtim.tv_sec)
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                out[rel] = Node(kind: "d", mode: mode, mtime: mtime, what: "")
                for name in try FileManager.default.contentsOfDirectory(atPath: path) {
                    try walk(rel.isEmpty ? name : rel + "/" + name)
                }
            case S_IFREG:
                out[rel] = Node(kind: "f", mode: mode, mtime: mtime, what: try sha256(file: path))
            case S_IFLNK:
                let target = try FileManager.default.destinationOfSymbolicLink(atPath: path)
                // A symlink's own mode is always 0777 on Linux, and its mtime is not what tar sets.
                out[rel] = Node(kind: "l", mode: 0o777, mtime: 0, what: target)
            default:
                out[rel] = Node(kind: "?", mode: mode, mtime: mtime, what: "")
            }
        }
        try walk("")
        return out
    }

    /// nested dirs, an empty dir, a 3 MiB file, a symlink inside the tree,
    /// a symlink to /etc (stored as a link), a 0755 file, a 0750 directory.
    func makeTree(_ name: String) throws -> String {
        let root = v.path + "/" + name
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/a/b/c", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/empty", withIntermediateDirectories: false)
        try v.write(name + "/a/b/c/deep.txt", Array("deep\n".utf8))
        try v.write(name + "/a/top.txt", Array("top\n".utf8), mode: 0o600)
        try v.write(name + "/big.bin", randomBytes(3 << 20))
        try v.write(name + "/run.sh", Array("#!/bin/sh\necho hi\n".utf8), mode: 0o755)
        try fm.createSymbolicLink(atPath: root + "/inside-link", withDestinationPath: "a/b/c/deep.txt")
        try fm.createSymbolicLink(atPath: root + "/etc-link", withDestinationPath: "/etc")
        #expect(chmod(root + "/a/b", 0o750) == 0)
        // Some mtimes in the past, so that "kept" means something.
        for (rel, t) in [("a/top.txt", 1_600_000_000), ("a/b/c", 1_500_000_000), ("empty", 1_400_000_000)] {
            var times = [timespec(tv_sec: t, tv_nsec: 0), timespec(tv_sec: t, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, root + "/" + rel, &times, 0) == 0)
        }
        return root
    }

    @Test func aTreeRoundTripsThroughTheVault() throws {
        let source = try makeTree("tree")
        let original = try Self.snapshot(source)

        let added = try v.add(["add", source])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stderr == "vault: added 'tree' (4 files, 3.0 MiB)\n")
        let listed = try #require(try v.listed().first { $0.name == "tree" })
        #expect(listed.kind == "folder")
        #expect(listed.files == 4)
        #expect(listed.size == UInt64((3 << 20) + 5 + 4 + 18))
        let text = try v.run(["list"])
        #expect(text.stdoutText.contains("folder, 4 files"), "\(text.stdoutText)")

        // restore --to DIR: the same tree (contents, modes, mtimes, link targets).
        let out = v.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let r = try v.run(["restore", "tree", "--to", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "vault: restored 'tree' to '\(out)/tree'\n")
        var restored = try Self.snapshot(out + "/tree")
        // (The root directory's own mode and mtime: see restoredRootKeepsItsModeAndMTime.)
        restored[""] = original[""]
        #expect(restored == original, "\(restored.sorted { $0.key < $1.key })")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["tree"])

        // get streams the pax archive: tar lists it, in the documented order.
        let pax = try v.get("tree")
        #expect(pax.status == 0)
        #expect(pax.stdout.count % 10240 == 0)
        let tar = try CLIHarness.run(["tar", "-t"], stdin: pax.stdout, environment: v.environment(),
                                     executable: "/usr/bin/env")
        #expect(tar.status == 0, "\(tar.stderr)")
        #expect(tar.stdoutText.split(separator: "\n").map(String.init) == [
            "a/", "a/b/", "a/b/c/", "a/b/c/deep.txt", "a/top.txt", "big.bin", "empty/", "etc-link", "inside-link", "run.sh"])
        let verbose = try CLIHarness.run(["tar", "-tv"], stdin: pax.stdout, environment: v.environment(),
                                         executable: "/usr/bin/env")
        #expect(verbose.stdoutText.contains("etc-link -> /etc"), "\(verbose.stdoutText)")
        #expect(verbose.stdoutText.contains("-rwxr-xr-x 0/0"), "\(verbose.stdoutText)")

        // The same tree gives the same bytes.
        #expect(try v.add(["add", source, "--name", "again"]).status == 0)
        #expect(try v.get("again").stdout == pax.stdout)

        // Restoring again: skipped (exit 3), and nothing changed.
        let before = try Self.snapshot(out + "/tree")
        let again = try v.run(["restore", "tree", "--to", out])
        #expect(again.status == 3)
        #expect(firstLine(again.stderr) == "vault: '\(out)/tree' already exists")
        #expect(try Self.snapshot(out + "/tree") == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["tree"])
    }

    /// The folder's own permission bits and mtime are in the manifest entry
    /// (`list --json` shows them); restore should give them back to the
    /// root, as it does for every directory inside.
    /// `get FOLDER/PATH` and `restore FOLDER/PATH`: one file out of a folder
    /// item, stored compressed (the default) or raw; a path that is not a
    /// file there, a file item, and a name that is nothing at all each say so.
    @Test func oneFileComesOutOfAFolderItem() throws {
        let source = try makeTree("Documents")
        #expect(try v.add(["add", source]).status == 0)
        #expect(try v.add(["add", source, "--name", "raw", "--compression", "off"]).status == 0)
        let notes = try v.write("notes.txt", Array("notes\n".utf8))
        #expect(try v.add(["add", notes]).status == 0)
        #expect(try v.listed().map(\.name) == ["Documents", "notes.txt", "raw"])
        for item in ["Documents", "raw"] {
            let deep = try v.run(["get", item + "/a/b/c/deep.txt"])
            #expect(deep.status == 0 && deep.stdoutText == "deep\n" && deep.stderr == "", "\(item): \(deep.stderr)")
            let out = v.path + "/big-\(item).bin"
            #expect(try v.run(["get", item + "/big.bin", "-o", out]).status == 0)
            #expect(try sha256(file: out) == sha256(file: source + "/big.bin"))
        }

        // A missing path, a directory and a link inside: nothing is written.
        let missing = try v.run(["get", "Documents/a/x.txt"])
        #expect(missing.status == 16)
        #expect(missing.stderr == "vault: no file Documents/a/x.txt in folder item Documents\n"
                + "hint: 'vault restore Documents' writes the whole folder\n")
        let directory = try v.run(["get", "Documents/a/b"])
        #expect(directory.status != 0 && directory.stdout.isEmpty)
        #expect(directory.stderr.hasPrefix("vault: 'Documents/a/b' is a directory in folder item 'Documents'"), "\(directory.stderr)")
        #expect(try v.run(["get", "Documents/inside-link"]).stderr.contains("is a symbolic link in folder item 'Documents'"))
        // A file item has nothing inside; item names never hold '/', so no
        // item can be named like a path, and a word naming no item is named whole.
        let inFile = try v.run(["get", "notes.txt/x"])
        #expect(inFile.status == 16 && inFile.stderr.hasPrefix("vault: 'notes.txt' is a file item, not a folder: there is no 'x' inside it\n"))
        #expect(try v.add(["add", notes, "--name", "Documents/a/top.txt"]).status != 0)
        let nothing = try v.run(["get", "nothing/a.txt"])
        #expect(nothing.status == 16 && nothing.stderr.hasPrefix("vault: no item named 'nothing/a.txt'\n"))

        // restore: the file under DIR by its own name, with its mode and time.
        let to = v.path + "/restored"
        let restored = try v.run(["restore", "Documents/a/top.txt", "notes.txt", "--to", to])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try String(contentsOfFile: to + "/top.txt", encoding: .utf8) == "top\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: to + "/top.txt")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 == 1_600_000_000)
        #expect(try String(contentsOfFile: to + "/notes.txt", encoding: .utf8) == "notes\n")
        // Never over an existing file: skipped, exit 3, the file unchanged.
        let before = try Self.snapshot(to)
        let again = try v.run(["restore", "Documents/a/top.txt", "--to", to])
        #expect(again.status == 3 && again.stderr.contains("'\(to)/top.txt' already exists"), "\(again.stderr)")
        #expect(try Self.snapshot(to) == before)
        // A directory inside: that subtree alone, as it was in the source.
        let subtree = try v.run(["restore", "Documents/a", "--to", to])
        #expect(subtree.status == 0, "\(subtree.stderr)")
        #expect(try Self.snapshot(to + "/a") == Self.snapshot(source + "/a"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: to).sorted() == ["a", "notes.txt", "top.txt"])

        // --version picks the folder's version the file comes from.
        try v.write("Documents/a/top.txt", Array("top, edited\n".utf8))
        #expect(try v.add(["add", source]).status == 0)
        #expect(try v.run(["get", "Documents/a/top.txt"]).stdoutText == "top, edited\n")
        #expect(try v.run(["get", "Documents/a/top.txt", "--version", "1"]).stdoutText == "top\n")
    }

    @Test func restoredRootKeepsItsModeAndMTime() throws {
        let source = try makeTree("rooted")
        #expect(chmod(source, 0o751) == 0)
        var times = [timespec(tv_sec: 1_300_000_000, tv_nsec: 0), timespec(tv_sec: 1_300_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, source, &times, 0) == 0)
        #expect(try v.add(["add", source]).status == 0)
        let json = try JSONObject.parse(try v.run(["list", "--json"]).stdout)
        let item = (json["items"] as? [[String: Any]])?.first
        #expect(item?["mode"] as? Int == 0o751)
        #expect(item?["modified"] as? String == "2011-03-13T07:06:40Z")
        let out = v.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        #expect(try v.run(["restore", "rooted", "--to", out]).status == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: out + "/rooted")[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o751, "restored root has mode \(String(mode?.intValue ?? 0, radix: 8))")
        #expect(try Self.snapshot(out + "/rooted")[""]?.mtime == 1_300_000_000)
    }

    @Test func restoringIntoAnExistingFileIsASkipExit3() throws {
        let source = try makeTree("t")
        #expect(try v.add(["add", source]).status == 0)
        let out = v.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        try v.write("out/t", Array("precious".utf8))
        let r = try v.run(["restore", "t", "--to", out])
        #expect(r.status == 3)
        #expect(try String(contentsOfFile: out + "/t", encoding: .utf8) == "precious")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["t"])
    }

    // MARK: hostile archives

    /// Writes pax archives made by hand with Python's tarfile and returns
    /// their paths by name. Everything that would escape is aimed at unique
    /// names, so that the test can show nothing was written there.
    func makeArchives(escape: String) throws -> [String: String] {
        let script = """
        import io, sys, tarfile
        out, esc = sys.argv[1], sys.argv[2]
        def reg(name, data=b"evil\\n"):
            t = tarfile.TarInfo(name); t.size = len(data); t.mode = 0o644; return t, data
        def node(name, kind, link=""):
            t = tarfile.TarInfo(name); t.type = kind; t.linkname = link; t.mode = 0o755; return t, None
        def write(path, members):
            with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
                for t, data in members:
                    tf.addfile(t, io.BytesIO(data) if data is not None else None)
        dev = node("null", tarfile.CHRTYPE); dev[0].devmajor, dev[0].devminor = 1, 3
        write(out + "/absolute.tar", [reg("ok.txt"), reg(esc + "-absolute")])
        write(out + "/dotdot.tar", [reg("ok.txt"), reg("../x")])
        write(out + "/dotdot-deep.tar", [node("d", tarfile.DIRTYPE), reg("d/../../../" + esc.rsplit("/", 1)[1] + "-dotdot")])
        write(out + "/through-symlink.tar", [node("link", tarfile.SYMTYPE, "/tmp"), reg("link/" + esc.rsplit("/", 1)[1] + "-symlink")])
        write(out + "/hardlink.tar", [reg("ok.txt"), node("passwd", tarfile.LNKTYPE, "/etc/passwd")])
        write(out + "/device.tar", [reg("ok.txt"), dev])
        write(out + "/fifo.tar", [reg("ok.txt"), node("fifo", tarfile.FIFOTYPE)])
        """
        let dir = v.path + "/archives"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        let r = try CLIHarness.run(["python3", "-c", script, dir, escape], environment: v.environment(),
                                   executable: "/usr/bin/env")
        guard r.status == 0 else { throw Failure("making the archives: \(r.stderr)") }
        var out: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: dir) where file.hasSuffix(".tar") {
            out[String(file.dropLast(4))] = dir + "/" + file
        }
        return out
    }

    /// Puts `archive` into the vault as a folder item named `name`, the way
    /// `vault add` would, with only the vault's public key.
    func dropInFolder(_ name: String, _ archive: String) throws {
        let content = Array(try Data(contentsOf: URL(fileURLWithPath: archive)))
        let r = try CLIHarness.run(["python3", Self.dropIn, v.dir, name, "folder"], stdin: content,
                                   environment: v.environment(), executable: "/usr/bin/env")
        guard r.status == 0 else { throw Failure("vault_dropin.py: \(r.stderr)") }
    }

    @Test func hostileArchivesAreRefusedAndLeaveNothingBehind() throws {
        // Escapes aim at /tmp/<unique>-*, beside the sandbox, and at the sandbox itself.
        let escape = "/tmp/vault-hostile-\(UInt64.random(in: 0...UInt64.max))"
        let archives = try makeArchives(escape: escape)
        #expect(archives.count == 7)
        for (name, path) in archives { try dropInFolder(name, path) }
        // A benign archive through the same route restores fine (the route works).
        try FileManager.default.createDirectory(atPath: v.path + "/benign/sub", withIntermediateDirectories: true)
        try v.write("benign/sub/f.txt", Array("fine\n".utf8))
        let tar = try CLIHarness.run(["tar", "--format=pax", "-C", v.path + "/benign", "-cf", v.path + "/benign.tar", "sub"],
                                     environment: v.environment(), executable: "/usr/bin/env")
        #expect(tar.status == 0, "\(tar.stderr)")
        try dropInFolder("benign", v.path + "/benign.tar")

        let listed = try v.listed()
        #expect(listed.map(\.name).sorted() == (Array(archives.keys) + ["benign"]).sorted())
        #expect(listed.allSatisfy { $0.kind == "folder" })
        // They are authenticated items, but restore would refuse each: check
        // --read-data applies restore's rules and names every one of them.
        let check = try v.run(["check", "--read-data", "--json"])
        #expect(check.status == 14, "\(check.stderr)")
        let problems = (try JSONObject.parse(check.stdout)["problems"] as? [[String: Any]] ?? []).compactMap { $0["item"] as? String }
        #expect(problems.sorted() == archives.keys.sorted())

        let good = v.path + "/good"
        try FileManager.default.createDirectory(atPath: good, withIntermediateDirectories: false)
        let ok = try v.run(["restore", "benign", "--to", good])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try String(contentsOfFile: good + "/benign/sub/f.txt", encoding: .utf8) == "fine\n")

        for name in archives.keys.sorted() {
            let target = v.path + "/restore-\(name)"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
            let r = try v.run(["restore", name, "--to", target])
            #expect(r.status != 0, "\(name): restore succeeded")
            #expect(r.status != 137 && r.status != 134 && r.status != 139, "\(name): crashed (\(r.status))")
            #expect(firstLine(r.stderr).hasPrefix("vault: refusing to restore '\(name)': "), "\(name): \(r.stderr)")
            let messages = r.stderr.split(separator: "\n").filter { $0.hasPrefix("vault:") }
            #expect(messages.count == 1, "\(name): \(r.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: target) == [], "\(name): left something")
        }
        let escaped = try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter {
            $0.hasPrefix(String(escape.dropFirst(5)))
        }
        #expect(escaped == [], "written outside the target: \(escaped)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.path).filter {
            $0 == "x" || $0.hasPrefix(String(escape.dropFirst(5)))
        } == [])
        // The reasons, one per kind of attack.
        let reasons: [String: String] = [
            "absolute": "absolute path", "dotdot": "'..'", "dotdot-deep": "'..'",
            "through-symlink": "through a symlink", "hardlink": "hard link", "device": "character device",
            "fifo": "fifo",
        ]
        for (name, reason) in reasons {
            let r = try v.run(["restore", name, "--to", v.path + "/restore-\(name)"])
            #expect(firstLine(r.stderr).contains(reason), "\(name): \(r.stderr)")
        }

        // The vault is fine afterwards, once the refused items are gone.
        let list = try v.run(["list"])
        #expect(list.status == 0)
        #expect(try v.run(["remove"] + archives.keys.sorted()).status == 0)
        #expect(try v.run(["check", "--read-data"]).status == 0)
    }

    /// FORMAT.md: "a path named twice" is refused, with nothing left.
    @Test func anArchiveNamingAPathTwiceIsRefused() throws {
        let script = """
        import io, sys, tarfile
        with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tf:
            for data in (b"first\\n", b"second\\n"):
                t = tarfile.TarInfo("same.txt"); t.size = len(data); tf.addfile(t, io.BytesIO(data))
        """
        let archive = v.path + "/dup.tar"
        #expect(try CLIHarness.run(["python3", "-c", script, archive], environment: v.environment(),
                                   executable: "/usr/bin/env").status == 0)
        try dropInFolder("dup", archive)
        let target = v.path + "/out"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        let r = try v.run(["restore", "dup", "--to", target])
        #expect(r.status != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target) == [])
        #expect(firstLine(r.stderr).hasPrefix("vault: refusing to restore 'dup': "), "\(r.stderr)")
    }
}

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A vault and a source tree for `vault backup` tests, with the host cache
/// inside the sandbox.
final class BackupFixture {
    let v: VaultFixture
    let source: String
    var cacheEnv: [String: String] { ["XDG_CACHE_HOME": v.path + "/cache"] }

    init() throws {
        v = try VaultFixture()
        source = v.path + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: false)
    }

    /// `vault backup ARGS --json` (no password), its summary; fails the test unless it exits `status`.
    @discardableResult
    func backup(_ args: [String] = [], status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let r = try v.add(["backup", source, "--json"] + args, cacheEnv)
        #expect(r.status == status, "backup: \(r.stderr)", sourceLocation: sourceLocation)
        return (try? JSONObject.parse(r.stdout)) ?? [:]
    }

    func snapshots(_ args: [String]) throws -> CLIHarness.Result { try v.run(["snapshots"] + args, cacheEnv) }

    /// How many snapshots `snapshots --json` printed (nil: not that JSON).
    static func snapshotCount(_ r: CLIHarness.Result) -> Int? {
        ((try? JSONObject.parse(r.stdout))?["snapshots"] as? [Any])?.count
    }

    func write(_ relative: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws {
        let path = source + "/" + relative
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        chmod(path, mode)
    }

    func mkdir(_ relative: String, mode: mode_t = 0o755) throws {
        try FileManager.default.createDirectory(atPath: source + "/" + relative, withIntermediateDirectories: true)
        chmod(source + "/" + relative, mode)
    }

    /// Sets a path's modification time to the nanosecond (not following links).
    static func setTime(_ path: String, seconds: Int, nanoseconds: Int) {
        var t = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
        _ = utimensat(AT_FDCWD, path, &t, AT_SYMLINK_NOFOLLOW)
    }

    static func stat(_ path: String) -> stat {
        var st = Glibc.stat()
        _ = lstat(path, &st)
        return st
    }

    static func random(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9e3779b97f4a7c15 | 1
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { b in
            let words = b.bindMemory(to: UInt64.self)
            for i in words.indices {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                words[i] = state
            }
        }
        return out
    }

    /// A plain-directory remote 'usb' holding this vault (pushed), its
    /// fingerprint, and a sender's sandbox with an empty `src` folder: what a
    /// `backup --to` test starts from.
    func remoteAndSender() throws -> (remote: String, fingerprint: String, sender: Sandbox, source: String) {
        let remote = v.path + "/remote"
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: false)
        #expect(try v.run(["remote", "add", "usb", remote]).status == 0)
        #expect(try v.run(["push"]).status == 0)
        let fingerprint = try v.info()["public_key_fingerprint"] as? String ?? ""
        let sender = try Sandbox()
        let source = sender.path + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: false)
        return (remote, fingerprint, sender, source)
    }

    /// Names of the inbox's files ending in `suffix`, largest first.
    func inbox(_ suffix: String) throws -> [String] {
        let dir = v.dir + "/inbox"
        return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(suffix) && !$0.hasPrefix(".") }
            .sorted { Self.stat(dir + "/" + $0).st_size > Self.stat(dir + "/" + $1).st_size }
    }
}

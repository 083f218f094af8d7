// The calls `vault backup` and snapshot restores need beyond the others:
// the host name, hard links, ownership and times to the nanosecond, each
// on the path itself (never through a symbolic link).
#if canImport(Glibc)
import Glibc
#endif

extension Syscall {
    /// The corresponding C function is `gethostname`; "localhost" if it fails.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// The corresponding C function is `link` (a new name for an existing file).
    public static func link(_ existing: some FilePathRepresentable, at path: some FilePathRepresentable) throws {
        let (e, p) = (existing.filePath, path.filePath)
        _ = try retrying("link", path: p.description) { e.withCString { a in p.withCString { b in Glibc.link(a, b) } } }
    }

    /// `fchownat(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW)`: a symbolic link's own owner.
    public static func setOwner(_ path: some FilePathRepresentable, user: UInt32, group: UInt32) throws {
        let p = path.filePath
        _ = try retrying("chown", path: p.description) { p.withCString { fchownat(AT_FDCWD, $0, user, group, AT_SYMLINK_NOFOLLOW) } }
    }

    /// `utimensat(AT_FDCWD, path, {modified, modified}, AT_SYMLINK_NOFOLLOW)`, to the nanosecond.
    public static func setTime(_ path: some FilePathRepresentable, seconds: Int64, nanoseconds: UInt32) throws {
        let p = path.filePath
        let t = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        var times = [t, t]
        _ = try retrying("utimensat", path: p.description) { p.withCString { utimensat(AT_FDCWD, $0, &times, AT_SYMLINK_NOFOLLOW) } }
    }

    /// The corresponding C function is `chmod` (by path; restore calls it
    /// only on directories and files it has just created).
    public static func chmod(_ path: some FilePathRepresentable, _ mode: UInt16) throws {
        let p = path.filePath
        _ = try retrying("chmod", path: p.description) { p.withCString { Glibc.chmod($0, mode_t(mode & 0o7777)) } }
    }

    /// The effective user id is 0 (restore then sets owners too).
    public static var isRoot: Bool { geteuid() == 0 }
}

extension OpenOptions {
    /// Every write goes to the end of the file (O_APPEND).
    public static let append = OpenOptions(rawValue: O_APPEND)
}

extension Syscall {
    /// Shell-style matching of `name` against `pattern` (`*`, `?`, `[...]`);
    /// with `pathname`, wildcards do not match '/'. The corresponding C
    /// function is `fnmatch`.
    public static func matches(pattern: [UInt8], _ name: [UInt8], pathname: Bool) -> Bool {
        FilePath(bytes: pattern).withCString { p in
            FilePath(bytes: name).withCString { n in fnmatch(p, n, pathname ? FNM_PATHNAME : 0) == 0 }
        }
    }
}

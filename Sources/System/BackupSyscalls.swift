// The calls `vault backup` and snapshot restores need beyond the others:
// the host name, hard links, ownership and times to the nanosecond, each
// on the path itself (never through a symbolic link).
import CSystem
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
        _ = try retrying(.link, path: p.description) { e.withCString { a in p.withCString { b in Glibc.link(a, b) } } }
    }

    /// `fchownat(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW)`: a symbolic link's own owner.
    public static func setOwner(_ path: some FilePathRepresentable, user: UInt32, group: UInt32) throws {
        let p = path.filePath
        _ = try retrying(.chown, path: p.description) { p.withCString { fchownat(AT_FDCWD, $0, user, group, AT_SYMLINK_NOFOLLOW) } }
    }

    /// `utimensat(AT_FDCWD, path, {modified, modified}, AT_SYMLINK_NOFOLLOW)`, to the nanosecond.
    public static func setTime(_ path: some FilePathRepresentable, seconds: Int64, nanoseconds: UInt32) throws {
        let p = path.filePath
        let t = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        var times = [t, t]
        _ = try retrying(.utimensat, path: p.description) { p.withCString { utimensat(AT_FDCWD, $0, &times, AT_SYMLINK_NOFOLLOW) } }
    }

    /// The corresponding C function is `chmod` (by path; restore calls it
    /// only on directories and files it has just created).
    public static func chmod(_ path: some FilePathRepresentable, _ mode: UInt16) throws {
        let p = path.filePath
        _ = try retrying(.chmod, path: p.description) { p.withCString { Glibc.chmod($0, mode_t(mode & 0o7777)) } }
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
    /// glibc's FNM_CASEFOLD (1 << 4), a GNU extension Swift's Glibc module
    /// does not export.
    static let fnmCaseFold: Int32 = 1 << 4

    public static func matches(pattern: [UInt8], _ name: [UInt8], pathname: Bool, ignoringCase: Bool = false) -> Bool {
        FilePath(bytes: pattern).withCString { p in
            FilePath(bytes: name).withCString { n in
                fnmatch(p, n, (pathname ? FNM_PATHNAME : 0) | (ignoringCase ? Self.fnmCaseFold : 0)) == 0
            }
        }
    }
}

// Snapshot restores work relative to open directories (each made or
// checked once, never reached again by a path that could pass through a
// link or outgrow PATH_MAX): the *at forms of the calls above.
extension Syscall {
    /// A new file with no name in the open directory `directory`
    /// (`openat(directory, ".", O_TMPFILE | O_WRONLY)`, 0600), or nil where
    /// the file system has no such thing.
    public static func openNameless(inDirectory directory: Int32) throws -> Int32? {
        let fd = csystem_open_tmpfile_at(directory, 0o600)
        if fd >= 0 { return fd }
        let e = Errno.current
        if e == .notSupported || e == .isDirectory || e == .invalidArgument { return nil }
        throw SystemError(operation: .open, errno: e)
    }

    /// Gives a nameless (O_TMPFILE) file, or another name of a file, the
    /// name `name` in `directory`; EEXIST if it is taken. The corresponding
    /// C call is `linkat(AT_FDCWD, "/proc/self/fd/N", directory, name, AT_SYMLINK_FOLLOW)`.
    public static func link(_ fd: Int32, in directory: Int32, _ name: [UInt8], display: String) throws {
        _ = try retrying(.link, path: display) {
            FilePath(bytes: name).withCString { linkat(AT_FDCWD, "/proc/self/fd/\(fd)", directory, $0, AT_SYMLINK_FOLLOW) }
        }
    }

    /// `linkat(AT_FDCWD, existing, directory, name, 0)`: a new name for the
    /// file at `existing` (not for a link there: its last component is not followed).
    public static func link(_ existing: FilePath, in directory: Int32, _ name: [UInt8], display: String) throws {
        _ = try retrying(.link, path: display) {
            existing.withCString { e in FilePath(bytes: name).withCString { linkat(AT_FDCWD, e, directory, $0, 0) } }
        }
    }

    /// `fstatat(directory, name, AT_SYMLINK_NOFOLLOW)`; nil if nothing is there.
    public static func statusIfPresent(in directory: Int32, _ name: [UInt8], display: String) throws -> FileStatus? {
        var st = stat()
        let r = FilePath(bytes: name).withCString { fstatat(directory, $0, &st, AT_SYMLINK_NOFOLLOW) }
        if r == 0 { return FileStatus(st) }
        let e = Errno.current
        if e == .noSuchFile { return nil }
        throw SystemError(operation: .stat, path: display, errno: e)
    }

    /// `renameat(directory, from, directory, to)`: replaces `to`.
    public static func rename(in directory: Int32, _ from: [UInt8], _ to: [UInt8], display: String) throws {
        _ = try retrying(.rename, path: display) {
            FilePath(bytes: from).withCString { a in FilePath(bytes: to).withCString { b in renameat(directory, a, directory, b) } }
        }
    }

    /// `renameat2(directory, from, directory, to, RENAME_NOREPLACE)`: EEXIST if `to` is taken.
    public static func renameNoReplace(in directory: Int32, _ from: [UInt8], _ to: [UInt8], display: String) throws {
        _ = try retrying(.rename, path: display) {
            FilePath(bytes: from).withCString { a in FilePath(bytes: to).withCString { b in csystem_renameat_noreplace(directory, a, b) } }
        }
    }

    /// `symlinkat(target, directory, name)`.
    public static func symlink(target: [UInt8], in directory: Int32, _ name: [UInt8], display: String) throws {
        _ = try retrying(.symlink, path: display) {
            FilePath(bytes: target).withCString { t in FilePath(bytes: name).withCString { symlinkat(t, directory, $0) } }
        }
    }

    /// `fchown`.
    public static func setOwner(_ fd: Int32, user: UInt32, group: UInt32) throws {
        _ = try retrying(.chown) { fchown(fd, user, group) }
    }

    /// `fchownat(directory, name, ..., AT_SYMLINK_NOFOLLOW)`: a symbolic link's own owner.
    public static func setOwner(in directory: Int32, _ name: [UInt8], user: UInt32, group: UInt32, display: String) throws {
        _ = try retrying(.chown, path: display) {
            FilePath(bytes: name).withCString { fchownat(directory, $0, user, group, AT_SYMLINK_NOFOLLOW) }
        }
    }

    /// `futimens`, to the nanosecond.
    public static func setTime(_ fd: Int32, seconds: Int64, nanoseconds: UInt32) throws {
        let t = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        var times = [t, t]
        _ = try retrying(.utimensat) { futimens(fd, &times) }
    }

    /// `utimensat(directory, name, ..., AT_SYMLINK_NOFOLLOW)`: a symbolic link's own time.
    public static func setTime(in directory: Int32, _ name: [UInt8], seconds: Int64, nanoseconds: UInt32, display: String) throws {
        let t = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        var times = [t, t]
        _ = try retrying(.utimensat, path: display) {
            FilePath(bytes: name).withCString { utimensat(directory, $0, &times, AT_SYMLINK_NOFOLLOW) }
        }
    }

    /// Raises the soft limit on open descriptors to the hard limit (a deep
    /// restore holds one per directory on the way down). Best effort.
    public static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// How many files this process may have open (RLIMIT_NOFILE's soft limit).
    public static var openFileLimit: UInt64 {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return UInt64(limit.rlim_cur)
    }
}

// Files and directories. With ProcessSyscalls.swift, TerminalSyscalls.swift
// and Sockets.swift, the only code in the project that calls libc; every
// call that can fail goes through `retrying` (SystemError.swift). Paths are
// `FilePath`s (bytes); the corresponding C function is named on each.
import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// open(2) flags. O_CLOEXEC is always added.
public struct OpenOptions: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let readOnly = OpenOptions([])
    public static let writeOnly = OpenOptions(rawValue: O_WRONLY)
    public static let readWrite = OpenOptions(rawValue: O_RDWR)
    public static let create = OpenOptions(rawValue: O_CREAT)
    /// With `create`: fail if it exists.
    public static let exclusive = OpenOptions(rawValue: O_EXCL)
    /// Fail (ELOOP) if the last component is a symbolic link.
    public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
    /// Never block in open itself (a FIFO with no writer).
    public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
    public static let directory = OpenOptions(rawValue: O_DIRECTORY)
    public static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
}

public enum Syscall {
    // MARK: Opening and closing

    /// The corresponding C function is `open`.
    public static func open(_ path: some FilePathRepresentable, _ options: OpenOptions = .readOnly,
                            mode: UInt16 = 0o600) throws -> Int32 {
        let p = path.filePath
        return try retrying(.open, path: p.description) { p.withCString { Glibc.open($0, options.rawValue | O_CLOEXEC, mode_t(mode)) } }
    }

    /// `openat(directory, name, ...)`: a name relative to an open directory.
    public static func open(in directory: Int32, _ name: [UInt8], _ options: OpenOptions,
                            display: String) throws -> Int32 {
        try retrying(.open, path: display) {
            FilePath(bytes: name).withCString { openat(directory, $0, options.rawValue | O_CLOEXEC, 0o600) }
        }
    }

    public static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// A new file with no name in `directory` (O_TMPFILE, 0600), or nil where
    /// the file system has no such thing.
    public static func openNameless(in directory: some FilePathRepresentable) throws -> Int32? {
        let d = directory.filePath
        let fd = d.withCString { csystem_open_tmpfile($0, 0o600) }
        if fd >= 0 { return fd }
        let e = Errno.current
        if e == .notSupported || e == .isDirectory || e == .invalidArgument { return nil }
        throw SystemError(operation: .open, path: d.description, errno: e)
    }

    /// Gives a nameless (O_TMPFILE) file a name; EEXIST if it is taken.
    /// The corresponding C call is `linkat(AT_FDCWD, "/proc/self/fd/N", ..., AT_SYMLINK_FOLLOW)`.
    public static func linkNameless(_ fd: Int32, to path: some FilePathRepresentable) throws {
        let p = path.filePath
        _ = try retrying(.link, path: p.description) {
            p.withCString { linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, $0, AT_SYMLINK_FOLLOW) }
        }
    }

    // MARK: Reading and writing

    /// Reads until `buffer` is full or end of file; returns the count read.
    public static func readFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer,
                                 path: String? = nil) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retrying(.read, path: path) { Glibc.read(fd, buffer.baseAddress! + done, buffer.count - done) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// `readFully` into an array, without the array ever being resized
    /// (a resize would leave a copy of a secret in freed memory).
    public static func readFully(_ fd: Int32, into buffer: inout [UInt8], path: String? = nil) throws -> Int {
        try buffer.withUnsafeMutableBytes { try readFully(fd, $0, path: path) }
    }

    /// One read(2): for a terminal in canonical mode, at most one line.
    public static func readSome(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retrying(.read) { Glibc.read(fd, base, buffer.count) }
    }

    /// Reads `buffer.count` bytes at `offset`, or fewer at end of file.
    public static func preadFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: UInt64,
                                  path: String? = nil) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retrying(.read, path: path) {
                pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    public static func writeFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String? = nil) throws {
        var done = 0
        while done < buffer.count {
            done += try retrying(.write, path: path) { Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done) }
        }
    }

    public static func writeFully(_ fd: Int32, _ bytes: [UInt8], path: String? = nil) throws {
        try bytes.withUnsafeBytes { try writeFully(fd, $0, path: path) }
    }

    public static func pwriteFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: UInt64, path: String? = nil) throws {
        var done = 0
        while done < buffer.count {
            done += try retrying(.write, path: path) {
                pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
        }
    }

    /// Best-effort text output (prompts, messages on stderr).
    public static func writeText(_ fd: Int32, _ text: String) { try? writeFully(fd, Array(text.utf8)) }

    public static func ftruncate(_ fd: Int32, _ size: UInt64, path: String? = nil) throws {
        _ = try retrying(.truncate, path: path) { Glibc.ftruncate(fd, off_t(size)) }
    }

    // MARK: Status

    /// The corresponding C function is `fstat`.
    public static func status(_ fd: Int32, path: String? = nil) throws -> FileStatus {
        var st = stat()
        _ = try retrying(.stat, path: path) { fstat(fd, &st) }
        return FileStatus(st)
    }

    /// lstat (or, with `followLinks`, stat); nil if nothing is there.
    public static func status(of path: some FilePathRepresentable, followLinks: Bool = false) throws -> FileStatus? {
        let p = path.filePath
        #if DEBUG
        if let forced = SyscallFaults.forced(.stat, p.description) { throw SystemError(operation: .stat, path: p.description, errno: forced) }
        #endif
        var st = stat()
        let r = p.withCString { followLinks ? stat($0, &st) : lstat($0, &st) }
        if r == 0 { return FileStatus(st) }
        let e = Errno.current
        if e == .noSuchFile { return nil }
        throw SystemError(operation: .stat, path: p.description, errno: e)
    }

    /// `fstatat(directory, name, AT_SYMLINK_NOFOLLOW)`.
    public static func status(in directory: Int32, _ name: [UInt8], display: String) throws -> FileStatus {
        var st = stat()
        _ = try retrying(.stat, path: display) {
            FilePath(bytes: name).withCString { fstatat(directory, $0, &st, AT_SYMLINK_NOFOLLOW) }
        }
        return FileStatus(st)
    }

    /// Whether anything (even a dangling symbolic link) is at `path`.
    public static func exists(_ path: some FilePathRepresentable) -> Bool { ((try? status(of: path)) ?? nil) != nil }

    /// Bytes an unprivileged user may still write on the file system
    /// holding `path` (statvfs f_bavail * f_frsize); nil if unknown.
    public static func freeSpace(_ path: some FilePathRepresentable) -> UInt64? {
        var st = statvfs()
        guard path.filePath.withCString({ statvfs($0, &st) }) == 0 else { return nil }
        return UInt64(st.f_bavail) * UInt64(st.f_frsize)
    }

    // MARK: Durability

    public static func fsync(_ fd: Int32, path: String? = nil) throws {
        _ = try retrying(.fsync, path: path) { Glibc.fsync(fd) }
    }

    /// fsync of a directory, so a rename or unlink in it is durable.
    public static func fsyncDirectory(_ path: some FilePathRepresentable) throws {
        let fd = try open(path, .directory)
        defer { close(fd) }
        try fsync(fd, path: path.filePath.description)
    }

    /// syncfs(2) of the file system holding `path`: every dirty file on it
    /// reaches the disk (write-back errors are reported since Linux 5.8).
    /// syncfs(2) through an open file: for a directory this user may write
    /// but not read (another user's shared inbox), whose fsync needs an
    /// open the mode refuses.
    /// At most `count` malloc arenas. glibc gives a thread that finds the
    /// arenas busy a new one, each reserving 64 MiB of address space, up
    /// to 8 per core: a long-lived, many-threaded process (the mount) under
    /// load would otherwise grow its address space with the load.
    public static func limitMallocArenas(_ count: Int32) { _ = csystem_limit_malloc_arenas(count) }

    public static func syncFileSystem(of fd: Int32) throws {
        _ = try retrying(.syncfs) { csystem_syncfs(fd) }
    }

    /// Groups of at most this many files are made durable an fsync each
    /// (`makeDurable`).
    public static let fewFiles = 16

    /// Makes the files `fds` (all on one file system) durable: an fsync
    /// each when they are few, else one syncfs. syncfs writes back every
    /// dirty page of the file system, other programs' too: right after
    /// 700 MB were written there, restoring a 10-file folder waited about
    /// 0.6 s on it, where ten fsyncs cost a few milliseconds. For many
    /// files one syncfs is cheaper than a journal commit each.
    public static func makeDurable(_ fds: [Int32]) throws {
        if fds.count <= fewFiles {
            for fd in fds { try fsync(fd) }
        } else if let first = fds.first {
            try syncFileSystem(of: first)
        }
    }

    public static func syncFileSystem(_ path: some FilePathRepresentable) throws {
        let fd = try open(path, .directory)
        defer { close(fd) }
        _ = try retrying(.syncfs, path: path.filePath.description) { csystem_syncfs(fd) }
    }

    /// A written file waiting for a later group sync is handed to the disk
    /// at once from this size on; smaller ones wait for the group's one
    /// syncfs, which writes many at once (restores: SnapshotRestore,
    /// OutputGroups).
    public static let writebackFrom: UInt64 = 256 << 10

    /// sync_file_range(SYNC_FILE_RANGE_WRITE): starts writeback of a range
    /// without waiting. Only a hint: failures are ignored (fsync follows).
    public static func startWriteback(_ fd: Int32, from offset: UInt64, count: UInt64) {
        _ = csystem_start_writeback(fd, Int64(offset), Int64(count))
    }

    // MARK: Names

    public static func mkdir(_ path: some FilePathRepresentable, mode: UInt16 = 0o700) throws {
        let p = path.filePath
        _ = try retrying(.mkdir, path: p.description) { p.withCString { Glibc.mkdir($0, mode_t(mode)) } }
    }

    /// `mkdirat(directory, name, mode)`: a name relative to an open directory.
    public static func makeDirectory(in directory: Int32, _ name: [UInt8], mode: UInt16, display: String) throws {
        _ = try retrying(.mkdir, path: display) { FilePath(bytes: name).withCString { mkdirat(directory, $0, mode_t(mode)) } }
    }

    public static func rename(_ from: some FilePathRepresentable, _ to: some FilePathRepresentable) throws {
        let (f, t) = (from.filePath, to.filePath)
        _ = try retrying(.rename, path: t.description) { f.withCString { a in t.withCString { b in Glibc.rename(a, b) } } }
    }

    /// Moves `from` to `to` only if `to` does not exist (EEXIST otherwise):
    /// renameat2(RENAME_NOREPLACE), or where the file system lacks it, for a
    /// file, link then unlink.
    public static func renameNoReplace(_ from: some FilePathRepresentable, _ to: some FilePathRepresentable) throws {
        let (f, t) = (from.filePath, to.filePath)
        if f.withCString({ a in t.withCString { b in csystem_rename_noreplace(a, b) } }) == 0 { return }
        let e = Errno.current
        guard e == .invalidArgument || e == .noSystemCall else { throw SystemError(operation: .rename, path: t.description, errno: e) }
        _ = try retrying(.link, path: t.description) { f.withCString { a in t.withCString { b in Glibc.link(a, b) } } }
        try unlink(f)
    }

    public static func unlink(_ path: some FilePathRepresentable) throws {
        let p = path.filePath
        _ = try retrying(.unlink, path: p.description) { p.withCString { Glibc.unlink($0) } }
    }

    /// `unlinkat(directory, name, directory ? AT_REMOVEDIR : 0)`.
    public static func unlink(in directory: Int32, _ name: [UInt8], isDirectory: Bool, display: String) throws {
        _ = try retrying(isDirectory ? .rmdir : .unlink, path: display) {
            FilePath(bytes: name).withCString { unlinkat(directory, $0, isDirectory ? AT_REMOVEDIR : 0) }
        }
    }

    public static func rmdir(_ path: some FilePathRepresentable) throws {
        let p = path.filePath
        _ = try retrying(.rmdir, path: p.description) { p.withCString { Glibc.rmdir($0) } }
    }

    /// The names in a directory other than "." and "..", as bytes, in the
    /// order the file system gives them. A read error is thrown, never
    /// taken for the end of the listing.
    public static func listDirectory(_ path: some FilePathRepresentable) throws -> [[UInt8]] {
        let fd = try open(path, .directory)
        defer { close(fd) }
        return try names(in: fd, display: path.filePath.description)
    }

    /// The same for an open directory (which stays open).
    public static func names(in directory: Int32, display: String) throws -> [[UInt8]] {
        // fdopendir takes the descriptor it is given; give it its own.
        let copy = try retrying(.dup, path: display) { dup(directory) }
        guard let stream = fdopendir(copy) else {
            let e = Errno.current
            close(copy)
            throw SystemError(operation: .opendir, path: display, errno: e)
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                let e = Errno.current
                if e.rawValue != 0 { throw SystemError(operation: .readdir, path: display, errno: e) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name != [0x2e] && name != [0x2e, 0x2e] { names.append(name) }
        }
    }

    /// The target of a symbolic link (`readlink`, or `readlinkat` with a directory).
    public static func readLink(in directory: Int32 = AT_FDCWD, _ name: FilePath, display: String? = nil) throws -> [UInt8] {
        var target = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let n = try target.withUnsafeMutableBytes { out in
            try retrying(.readlink, path: display ?? name.description) {
                name.withCString { readlinkat(directory, $0, out.baseAddress!.assumingMemoryBound(to: CChar.self), out.count) }
            }
        }
        return Array(target[..<n])
    }

    /// The absolute, symlink-free form of `path` (`realpath`).
    public static func realPath(_ path: some FilePathRepresentable) throws -> FilePath {
        let p = path.filePath
        var out = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard p.withCString({ Glibc.realpath($0, &out) }) != nil else {
            throw SystemError(operation: .realpath, path: p.description, errno: .current)
        }
        return FilePath(bytes: out.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) })
    }

    public static func symlink(target: some FilePathRepresentable, at path: some FilePathRepresentable) throws {
        let (t, p) = (target.filePath, path.filePath)
        _ = try retrying(.symlink, path: p.description) { t.withCString { a in p.withCString { b in Glibc.symlink(a, b) } } }
    }

    // MARK: Modes, times, locks

    /// chmod then utimensat on `path` itself (never through a symbolic link).
    public static func setModeAndTime(_ path: some FilePathRepresentable, mode: UInt16, modified: Int64) throws {
        let p = path.filePath
        _ = try retrying(.chmod, path: p.description) { p.withCString { Glibc.chmod($0, mode_t(mode & 0o7777)) } }
        var times = [timespec(tv_sec: Int(modified), tv_nsec: 0), timespec(tv_sec: Int(modified), tv_nsec: 0)]
        _ = try retrying(.utimensat, path: p.description) { p.withCString { utimensat(AT_FDCWD, $0, &times, AT_SYMLINK_NOFOLLOW) } }
    }

    public static func chmod(_ fd: Int32, _ mode: UInt16) throws {
        _ = try retrying(.chmod) { fchmod(fd, mode_t(mode)) }
    }

    /// futimens: the file's access and modification times.
    public static func setTime(_ fd: Int32, modified: Int64) throws {
        var times = [timespec(tv_sec: Int(modified), tv_nsec: 0), timespec(tv_sec: Int(modified), tv_nsec: 0)]
        _ = try retrying(.utimensat) { futimens(fd, &times) }
    }

    /// flock(2); false if another holder has it and `wait` is false.
    public static func flock(_ fd: Int32, exclusive: Bool = true, wait: Bool = false) throws -> Bool {
        let op = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
        while true {
            if csystem_flock(fd, op) == 0 { return true }
            let e = Errno.current
            if e == .interrupted { continue }
            if e == .wouldBlock { return false }
            throw SystemError(operation: .flock, errno: e)
        }
    }

    /// Drops a lock taken with `flock`.
    public static func unlock(_ fd: Int32) { _ = csystem_flock(fd, LOCK_UN) }

    // MARK: Memory

    /// Anonymous private memory (`mmap`), to give back with `unmap`.
    public static func map(_ count: Int, populated: Bool = false) throws -> UnsafeMutableRawBufferPointer {
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | (populated ? MAP_POPULATE : 0)
        guard let p = mmap(nil, count, PROT_READ | PROT_WRITE, flags, -1, 0), p != MAP_FAILED else {
            throw SystemError(operation: .mmap, errno: .current)
        }
        return UnsafeMutableRawBufferPointer(start: p, count: count)
    }

    public static func unmap(_ buffer: UnsafeMutableRawBufferPointer) { munmap(buffer.baseAddress, buffer.count) }
}

// With Sockets.swift (TCP), the only file in VaultCore that calls libc. Every call goes through
// `retrying`, which turns -1/errno into a typed `VaultError.system` and
// retries EINTR in this one place.
#if canImport(Glibc)
import Glibc
#endif

// Glibc's `flock` name resolves to the struct; bind the function directly.
@_silgen_name("flock") private func c_flock(_ fd: Int32, _ operation: Int32) -> Int32
// sync_file_range is declared only under _GNU_SOURCE, which Swift's Glibc lacks.
@_silgen_name("sync_file_range") private func c_sync_file_range(_ fd: Int32, _ offset: Int64, _ count: Int64,
                                                                 _ flags: UInt32) -> Int32

// syncfs is declared only under _GNU_SOURCE too.
@_silgen_name("syncfs") private func c_syncfs(_ fd: Int32) -> Int32

enum Syscall {
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ operation: String, path: String? = nil,
                                           _ body: () -> T) throws -> T {
        while true {
            let r = body()
            if r != -1 { return r }
            let e = errno
            if e == EINTR { continue }
            throw VaultError.system(operation: operation, path: path, errno: e)
        }
    }

    /// The corresponding C function is `open`; O_CLOEXEC is always added.
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0o600) throws -> Int32 {
        try retrying("open", path: path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// A new unnamed file in `directory` (O_TMPFILE, mode 0600), or nil
    /// where the file system does not support that.
    static func openNameless(in directory: String) throws -> Int32? {
        // O_TMPFILE is a macro Swift does not import: __O_TMPFILE | O_DIRECTORY.
        let fd = Glibc.open(directory, 0o20000000 | O_DIRECTORY | O_WRONLY | O_CLOEXEC, 0o600)
        if fd >= 0 { return fd }
        switch errno {
        case EOPNOTSUPP, EISDIR, EINVAL: return nil
        default: throw VaultError.system(operation: "open", path: directory, errno: errno)
        }
    }

    /// Gives an O_TMPFILE file its name.
    static func linkNameless(_ fd: Int32, to path: String) throws {
        _ = try retrying("linkat", path: path) { linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) }
    }

    /// Reads until `buffer` is full or end of file; returns the count read.
    static func readFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retrying("read") { Glibc.read(fd, buffer.baseAddress! + done, buffer.count - done) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads exactly `buffer.count` bytes at `offset`, or returns the shorter
    /// count read before end of file.
    static func preadFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retrying("pread") {
                Glibc.pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    static func writeFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < buffer.count {
            done += try retrying("write") { Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done) }
        }
    }

    static func pwriteFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < buffer.count {
            done += try retrying("pwrite") {
                Glibc.pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
        }
    }

    /// stat (following symbolic links); nil if the path does not exist.
    static func statFollowing(_ path: String) throws -> Glibc.stat? {
        var st = Glibc.stat()
        if fstatat(AT_FDCWD, path, &st, 0) == 0 { return st }
        if errno == ENOENT { return nil }
        throw VaultError.system(operation: "stat", path: path, errno: errno)
    }

    static func fstat(_ fd: Int32) throws -> stat {
        var st = stat()
        _ = try retrying("fstat") { Glibc.fstat(fd, &st) }
        return st
    }

    static func fileSize(_ fd: Int32) throws -> UInt64 {
        var st = stat()
        _ = try retrying("fstat") { Glibc.fstat(fd, &st) }
        return UInt64(max(0, st.st_size))
    }

    static func fsync(_ fd: Int32) throws { _ = try retrying("fsync") { Glibc.fsync(fd) } }

    /// sync_file_range(SYNC_FILE_RANGE_WRITE): starts writeback of a range
    /// without waiting. Only a hint: failures are ignored (fsync still follows).
    static func startWriteback(_ fd: Int32, from offset: UInt64, count: UInt64) {
        _ = c_sync_file_range(fd, Int64(offset), Int64(count), 2 /* SYNC_FILE_RANGE_WRITE */)
    }

    static func mkdir(_ path: String, _ mode: mode_t = 0o700) throws {
        _ = try retrying("mkdir", path: path) { Glibc.mkdir(path, mode) }
    }

    static func rename(_ from: String, _ to: String) throws {
        _ = try retrying("rename", path: to) { Glibc.rename(from, to) }
    }

    /// Moves `from` to `to` only if `to` does not exist (link, then unlink
    /// the old name): the way plaintext output never overwrites a user's
    /// file, even one created a moment ago. Throws EEXIST otherwise.
    static func renameNoReplace(_ from: String, _ to: String) throws {
        _ = try retrying("link", path: to) { Glibc.link(from, to) }
        try unlink(from)
    }

    static func unlink(_ path: String) throws { _ = try retrying("unlink", path: path) { Glibc.unlink(path) } }

    static func rmdir(_ path: String) throws { _ = try retrying("rmdir", path: path) { Glibc.rmdir(path) } }

    /// fsync of a directory, so a rename or unlink in it is durable.
    static func fsyncDirectory(_ path: String) throws {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try fsync(fd)
    }

    /// lstat; nil if the path does not exist.
    static func lstat(_ path: String) throws -> stat? {
        var st = stat()
        if Glibc.lstat(path, &st) == 0 { return st }
        if errno == ENOENT { return nil }
        throw VaultError.system(operation: "lstat", path: path, errno: errno)
    }

    /// flock; returns false if another holder has it and `wait` is false.
    static func flock(_ fd: Int32, exclusive: Bool = true, wait: Bool = false) throws -> Bool {
        let op = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
        while true {
            if c_flock(fd, op) == 0 { return true }
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return false }
            throw VaultError.system(operation: "flock", path: nil, errno: errno)
        }
    }

    /// Names in a directory, without "." and "..".
    static func listDirectory(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw VaultError.system(operation: "opendir", path: path, errno: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func setModeAndTime(_ path: String, mode: UInt16, modified: Int64) throws {
        _ = try retrying("chmod", path: path) { Glibc.chmod(path, mode_t(mode & 0o777)) }
        var times = [timespec(tv_sec: Int(modified), tv_nsec: 0), timespec(tv_sec: Int(modified), tv_nsec: 0)]
        _ = try retrying("utimensat", path: path) { utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) }
    }

    static func fchmod(_ fd: Int32, _ mode: mode_t) throws { _ = try retrying("fchmod") { Glibc.fchmod(fd, mode) } }

    /// syncfs(2) of the file system holding `path`: every dirty file on it
    /// reaches the disk (write-back errors are reported since Linux 5.8).
    static func syncFileSystem(_ path: String) throws {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        _ = try retrying("syncfs", path: path) { c_syncfs(fd) }
    }

    /// Bytes an unprivileged user may still write on the file system
    /// holding `path` (statvfs f_bavail * f_frsize); nil if unknown.
    static func freeSpace(_ path: String) -> UInt64? {
        var st = statvfs()
        guard statvfs(path, &st) == 0 else { return nil }
        return UInt64(st.f_bavail) * UInt64(st.f_frsize)
    }

    static func ftruncate(_ fd: Int32, _ size: UInt64) throws {
        _ = try retrying("ftruncate") { Glibc.ftruncate(fd, off_t(size)) }
    }
}

/// Seconds on CLOCK_MONOTONIC, for durations.
enum MonotonicClock {
    static func seconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}

/// A raw buffer for bulk I/O. From 256 KiB up it is its own anonymous
/// mapping, returned to the kernel on deinit: malloc would keep it, and
/// with the long-lived small allocations of a large manifest between such
/// buffers its heap could not shrink (a rekey of 130,000 items grew to
/// 1.2 GiB). Smaller ones come from malloc.
final class PageBuffer: @unchecked Sendable {
    // @unchecked: the memory is owned here; users touch disjoint ranges
    // (ChunkWorkers) or one thread at a time.
    let raw: UnsafeMutableRawBufferPointer
    private let mapped: Bool

    init(count: Int) throws {
        if count >= 256 << 10 {
            guard let p = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), p != MAP_FAILED else {
                throw VaultError.system(operation: "mmap", path: nil, errno: errno)
            }
            raw = UnsafeMutableRawBufferPointer(start: p, count: count)
            mapped = true
        } else {
            raw = .allocate(byteCount: max(count, 1), alignment: 64)
            mapped = false
        }
    }

    deinit {
        if mapped { munmap(raw.baseAddress, raw.count) } else { raw.deallocate() }
    }
}

// The only file in VaultCore that calls libc. Every call goes through
// `retrying`, which turns -1/errno into a typed `VaultError.system` and
// retries EINTR in this one place.
#if canImport(Glibc)
import Glibc
#endif

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

    static func fileSize(_ fd: Int32) throws -> UInt64 {
        var st = stat()
        _ = try retrying("fstat") { fstat(fd, &st) }
        return UInt64(st.st_size)
    }

    static func fsync(_ fd: Int32) throws { _ = try retrying("fsync") { Glibc.fsync(fd) } }
}

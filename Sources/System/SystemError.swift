// The syscall layer's one error type and its one errno chokepoint: every
// call that can fail goes through `retrying`, which retries EINTR and turns
// -1 into a `SystemError` naming the call, the path and the errno.
#if canImport(Glibc)
import Glibc
#endif

/// An errno value, with names for the ones callers tell apart.
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let tooManySymlinks = Errno(rawValue: ELOOP)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    public static let noSystemCall = Errno(rawValue: ENOSYS)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    public static let noMemory = Errno(rawValue: ENOMEM)
    public static let ioError = Errno(rawValue: EIO)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    public static let addressFamilyNotSupported = Errno(rawValue: EAFNOSUPPORT)
    public static let tooBig = Errno(rawValue: E2BIG)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    public static let noData = Errno(rawValue: ENODATA)
    public static let outOfRange = Errno(rawValue: ERANGE)

    /// The errno of the calling thread, now.
    static var current: Errno { Errno(rawValue: errno) }

    /// strerror(3), first letter lower-cased to fit the `vault: ...` style
    /// ("no such file or directory").
    public var description: String {
        let text = String(cString: strerror(rawValue))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}

/// The call a `SystemError` comes from, by its C name ("open", "read"):
/// callers tell failures apart by it, and messages show its raw value.
/// `run` is a program started for the user (posix_spawn of a named
/// program: "cannot run 'rclone'").
public enum SystemCall: String, Sendable {
    case accept
    case bind
    case chmod
    case chown
    case connect
    case dup
    case flock
    case getxattr
    case listxattr
    case setxattr
    case fsync
    case getsockname
    case getsockopt
    case link
    case listen
    case mkdir
    case mmap
    case open
    case opendir
    case pipe
    case poll
    case posix_spawn
    case read
    case readdir
    case readlink
    case realpath
    case recv
    case rename
    case rmdir
    case run
    case send
    case socket
    case stat
    case symlink
    case syncfs
    case tcgetattr
    case tcsetattr
    case truncate
    case unlink
    case utimensat
    case waitpid
    case write
}

/// A failed system call: which one, on which path, and its errno.
public struct SystemError: Error, Equatable, Sendable {
    public let operation: SystemCall
    public let path: String?
    public let errno: Errno

    public init(operation: SystemCall, path: String? = nil, errno: Errno) {
        (self.operation, self.path, self.errno) = (operation, path, errno)
    }

    /// strerror(3) text, lower-cased.
    public var reason: String { errno.description }

    /// The same failure, reported on `path` (the user's name for a file
    /// rather than a temporary one beside it).
    public func on(_ path: String) -> SystemError { SystemError(operation: operation, path: path, errno: errno) }
}

/// Runs `body` until it returns something other than -1 with EINTR; -1 with
/// any other errno is thrown. The corresponding C idiom is
/// `while ((r = call()) == -1 && errno == EINTR);`.
@inline(__always)
func retrying<T: BinaryInteger>(_ operation: SystemCall, path: String? = nil, _ body: () -> T) throws(SystemError) -> T {
    #if DEBUG
    if let forced = SyscallFaults.forced(operation, path) { throw SystemError(operation: operation, path: path, errno: forced) }
    #endif
    while true {
        let r = body()
        if r != -1 { return r }
        let e = Errno.current
        if e == .interrupted { continue }
        throw SystemError(operation: operation, path: path, errno: e)
    }
}

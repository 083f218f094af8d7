import CSystem
#if canImport(Glibc)
import Glibc
#endif

// Unix stream sockets (for the unlock agent). A socket is named by a
// directory the caller opened and checked, plus a name in it: binding and
// connecting go through /proc/self/fd/N/NAME, so the path never outgrows
// sun_path (108 bytes, easily passed by a long $XDG_RUNTIME_DIR) and it is
// the very directory whose owner and mode were checked, not whatever the
// path names by then. Sends use MSG_NOSIGNAL, as TCP's do.

/// A connected Unix stream socket. Closed on deinit.
public final class UnixConnection: Sendable {
    public let fd: Int32

    init(fd: Int32) { self.fd = fd }

    deinit { Syscall.close(fd) }

    /// Connects to the socket `name` in the open directory `directory`.
    public static func connect(in directory: Int32, _ name: String) throws -> UnixConnection {
        let fd = try retrying(.socket) { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        let connection = UnixConnection(fd: fd)
        let path = procPath(directory, name)
        _ = try retrying(.connect, path: name) { withAddress(path) { Glibc.connect(fd, $0, $1) } }
        return connection
    }

    /// Who is at the other end: the user and process the kernel recorded
    /// when the connection was made (SO_PEERCRED), which the peer cannot
    /// choose.
    public func peerCredentials() throws -> (user: UInt32, process: Int32) {
        var uid: UInt32 = 0, pid: Int32 = 0
        _ = try retrying(.getsockopt) { csystem_peer_credentials(fd, &uid, &pid) }
        return (uid, pid)
    }

    /// Receive and send timeouts in seconds for the calls that follow.
    public func setTimeout(_ seconds: Int) {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    public func send(_ buffer: UnsafeRawBufferPointer) throws {
        try sendFully(fd, buffer, path: nil)
    }

    /// Fills `buffer` unless the peer closes or the timeout passes first;
    /// returns the count read.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try receiveFully(fd, into: buffer, path: nil)
    }
}

/// A listening Unix stream socket. Closed on deinit; the name it was bound
/// to stays until unlinked.
public final class UnixListener: Sendable {
    public let fd: Int32

    /// Binds `name` in the open directory `directory` (which must not hold
    /// that name) and listens. Accepting does not block.
    public init(in directory: Int32, _ name: String) throws {
        fd = try retrying(.socket) {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        do {
            let path = procPath(directory, name)
            _ = try retrying(.bind, path: name) { withAddress(path) { bind(fd, $0, $1) } }
            _ = try retrying(.listen, path: name) { listen(fd, 16) }
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    deinit { Syscall.close(fd) }

    /// Waits up to `seconds` for a connection; false when none came (or a
    /// signal arrived: the caller looks at its clock and calls again).
    public func waitForConnection(seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(0, min(seconds, 3600)) * 1000)
        return poll(&entry, 1, ms) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    /// The next waiting connection (blocking reads and writes), or nil if
    /// none is waiting.
    public func accept() throws -> UnixConnection? {
        // Linux's accept does not pass O_NONBLOCK on; the agent execs nothing,
        // so FD_CLOEXEC after the fact is only tidiness.
        let c = Glibc.accept(fd, nil, nil)
        if c >= 0 {
            _ = fcntl(c, F_SETFD, FD_CLOEXEC)
            return UnixConnection(fd: c)
        }
        switch errno {
        case EAGAIN, EINTR, ECONNABORTED: return nil
        default: throw SystemError(operation: .accept, errno: .current)
        }
    }
}

extension Syscall {
    /// fchmodat(directory, name, mode): also works on a socket, which
    /// fchmod on the socket's descriptor does not reach.
    public static func chmod(in directory: Int32, _ name: String, _ mode: UInt16) throws {
        _ = try retrying(.chmod, path: name) { fchmodat(directory, name, mode_t(mode), 0) }
    }

    /// renameat within one open directory.
    public static func rename(in directory: Int32, _ from: String, _ to: String) throws {
        _ = try retrying(.rename, path: to) { renameat(directory, from, directory, to) }
    }
}

private func procPath(_ directory: Int32, _ name: String) -> String { "/proc/self/fd/\(directory)/\(name)" }

/// Runs `body` with a sockaddr_un naming `path`; a path too long for it is
/// ENAMETOOLONG, as the kernel would say.
private func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count < capacity else { errno = ENAMETOOLONG; return -1 }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
    return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
}

#if canImport(Glibc)
import Glibc
#endif

// TCP (for `vault move`): plain blocking sockets, one connection at a time;
// every call goes through `retrying` like the rest of this layer. Sends use
// MSG_NOSIGNAL, so a peer that went away is an EPIPE error, never a SIGPIPE.

/// An IPv4 or IPv6 address.
public enum IPAddress: Equatable, Hashable, Sendable, CustomStringConvertible {
    case ipv4([UInt8])
    case ipv6([UInt8])

    /// Parses dotted IPv4 or textual IPv6 (inet_pton).
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .ipv4(withUnsafeBytes(of: &v4, Array.init)); return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .ipv6(withUnsafeBytes(of: &v6, Array.init)); return
        }
        return nil
    }

    public var bytes: [UInt8] {
        switch self { case .ipv4(let b), .ipv6(let b): return b }
    }

    public var description: String {
        let (family, count) = { () -> (Int32, Int) in
            switch self { case .ipv4: return (AF_INET, 16); case .ipv6: return (AF_INET6, 46) }
        }()
        var out = [CChar](repeating: 0, count: count + 1)
        let ok = bytes.withUnsafeBytes { b in inet_ntop(family, b.baseAddress, &out, socklen_t(count)) } != nil
        return ok ? String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }
}

/// A connected TCP socket. Closed on deinit.
public final class TCPConnection: Sendable {
    public let fd: Int32
    /// The peer, as text ("127.0.0.1:40312", "[::1]:40312").
    public let peer: String

    init(fd: Int32, peer: String) {
        self.fd = fd
        self.peer = peer
    }

    deinit { Syscall.close(fd) }

    /// Tries each address in order, each for at most `timeout` seconds.
    /// Throws the last address's error if none answers.
    public static func connect(to addresses: [IPAddress], port: UInt16, timeout: Int32 = 5) throws -> TCPConnection {
        var lastError: Error = SystemError(operation: .connect, errno: .invalidArgument)
        for address in addresses {
            do { return try connect(to: address, port: port, timeout: timeout) } catch { lastError = error }
        }
        throw lastError
    }

    static func connect(to address: IPAddress, port: UInt16, timeout: Int32) throws -> TCPConnection {
        let storage = SocketAddress(address, port: port)
        let fd = try retrying(.socket) { socket(storage.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        let connection = TCPConnection(fd: fd, peer: storage.description)
        // Non-blocking connect, so an unreachable address costs `timeout`
        // seconds rather than the kernel's two minutes.
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        let r = storage.withSockaddr { Glibc.connect(fd, $0, $1) }
        if r != 0 {
            guard Errno.current == .inProgress || Errno.current == .interrupted else {
                throw SystemError(operation: .connect, path: storage.description, errno: .current)
            }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = try retrying(.poll) { poll(&p, 1, timeout * 1000) }
            guard ready == 1 else { throw SystemError(operation: .connect, path: storage.description, errno: .timedOut) }
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
            guard err == 0 else { throw SystemError(operation: .connect, path: storage.description, errno: Errno(rawValue: err)) }
        }
        _ = fcntl(fd, F_SETFL, flags)
        connection.keepAlive()
        return connection
    }

    /// TCP keepalive after 30 s idle, every 10 s, 6 probes: a peer that
    /// vanished without a FIN (pulled cable, suspended laptop) is noticed in
    /// about 90 s instead of hours, while a slow peer (checking a large
    /// vault before it answers) may take as long as it needs.
    func keepAlive() {
        var on: Int32 = 1, idle: Int32 = 30, interval: Int32 = 10, count: Int32 = 6
        let size = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, size)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, size)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, size)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &count, size)
    }

    /// A receive timeout in seconds for the reads that follow (0: none).
    public func setReceiveTimeout(_ seconds: Int) {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all of `buffer`; `more` says another send follows at once
    /// (MSG_MORE, so a frame's prefix and body leave in the same segments).
    public func send(_ buffer: UnsafeRawBufferPointer, more: Bool = false) throws {
        try sendFully(fd, buffer, more: more, path: peer)
    }

    /// Fills `buffer` unless the peer closes first; returns the count read.
    /// A receive timeout reads as a closed connection.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try receiveFully(fd, into: buffer, path: peer)
    }

    /// Ends our direction (FIN) so the peer sees end of stream.
    public func shutdownSending() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
}

/// send until all of `buffer` is gone (MSG_NOSIGNAL: a closed peer is
/// EPIPE, not SIGPIPE). For TCP and Unix stream sockets alike.
func sendFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, more: Bool = false, path: String?) throws {
    var done = 0
    let flags = Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0)
    while done < buffer.count {
        done += try retrying(.send, path: path) { Glibc.send(fd, buffer.baseAddress! + done, buffer.count - done, flags) }
    }
}

/// recv until `buffer` is full, the peer closes, or the receive timeout
/// passes (a timeout or a reset reads as a close); returns the count read.
/// For TCP and Unix stream sockets alike.
func receiveFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String?) throws -> Int {
    var done = 0
    while done < buffer.count {
        let n = Glibc.recv(fd, buffer.baseAddress! + done, buffer.count - done, 0)
        if n > 0 { done += n; continue }
        if n == 0 { break }
        switch errno {
        case EINTR: continue
        case EAGAIN, ECONNRESET, ETIMEDOUT, EPIPE: return done
        default: throw SystemError(operation: .recv, path: path, errno: .current)
        }
    }
    return done
}

/// A listening TCP socket. Closed on deinit.
public final class TCPListener: Sendable {
    let fd: Int32
    /// The port actually bound (the kernel's choice when asked for 0).
    public let port: UInt16

    /// Listens on `address` (nil: every interface, IPv6 and IPv4) and
    /// `port` (0: a free one).
    public init(address: IPAddress?, port: UInt16) throws {
        var storage = address.map { SocketAddress($0, port: port) } ?? SocketAddress(anyIPv6Port: port)
        var fd = socket(storage.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 && address == nil && errno == EAFNOSUPPORT {
            // IPv6 disabled on this machine: every IPv4 interface instead.
            storage = SocketAddress(.ipv4([0, 0, 0, 0]), port: port)
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        guard fd >= 0 else { throw SystemError(operation: .socket, errno: .current) }
        var on: Int32 = 1, off: Int32 = 0
        let size = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, size)
        if address == nil { _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, size) }
        do {
            let place = storage.description
            _ = try retrying(.bind, path: place) { storage.withSockaddr { bind(fd, $0, $1) } }
            _ = try retrying(.listen, path: place) { listen(fd, 4) }
            var bound = SocketAddress()
            _ = try retrying(.getsockname) { bound.withMutableSockaddr { getsockname(fd, $0, $1) } }
            self.port = bound.port
        } catch {
            Syscall.close(fd)
            throw error
        }
        self.fd = fd
    }

    deinit { Syscall.close(fd) }

    /// Waits for the next connection.
    public func accept() throws -> TCPConnection {
        var peer = SocketAddress()
        let c = try retrying(.accept) { peer.withMutableSockaddr { Glibc.accept(fd, $0, $1) } }
        _ = fcntl(c, F_SETFD, FD_CLOEXEC)
        let connection = TCPConnection(fd: c, peer: peer.description)
        connection.keepAlive()
        return connection
    }

    /// This machine's addresses worth putting in a move code: IPv4 first,
    /// then global IPv6; loopback and link-local left out (a link-local
    /// IPv6 address needs an interface name the code has no room for).
    public static func localAddresses() -> [IPAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var v4: [IPAddress] = [], v6: [IPAddress] = []
        var next: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = next {
            next = entry.pointee.ifa_next
            guard let sa = entry.pointee.ifa_addr, entry.pointee.ifa_flags & UInt32(IFF_UP) != 0,
                  entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0 else { continue }
            switch Int32(sa.pointee.sa_family) {
            case AF_INET:
                let a = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                v4.append(.ipv4(withUnsafeBytes(of: a, Array.init)))
            case AF_INET6:
                let a = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                let b = withUnsafeBytes(of: a, Array.init)
                if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { continue }  // fe80::/10, link-local
                v6.append(.ipv6(b))
            default: continue
            }
        }
        var seen = Set<IPAddress>()
        return (v4 + v6).filter { seen.insert($0).inserted }
    }
}

/// A sockaddr_in or sockaddr_in6 in a sockaddr_storage.
struct SocketAddress: CustomStringConvertible {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)

    init() {}

    init(_ address: IPAddress, port: UInt16) {
        switch address {
        case .ipv4(let b):
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: b) }
            set(sin)
        case .ipv6(let b):
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: b) }
            set(sin6)
        }
    }

    /// [::]:port, every interface (IPv4 too unless IPV6_V6ONLY).
    init(anyIPv6Port port: UInt16) {
        self.init(.ipv6([UInt8](repeating: 0, count: 16)), port: port)
    }

    private mutating func set<T>(_ value: T) {
        withUnsafeMutableBytes(of: &storage) { raw in
            withUnsafeBytes(of: value) { raw.copyBytes(from: $0) }
        }
        length = socklen_t(MemoryLayout<T>.size)
    }

    var family: Int32 { Int32(storage.ss_family) }

    var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset (2), in network order.
            UInt16(raw[2]) << 8 | UInt16(raw[3])
        }
    }

    /// The address part, when it is IPv4 or IPv6 (an IPv4-mapped IPv6
    /// address reads as IPv4).
    var address: IPAddress? {
        withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET: return .ipv4(Array(raw[4..<8]))
            case AF_INET6:
                let b = Array(raw[8..<24])
                if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff { return .ipv4(Array(b[12...])) }
                return .ipv6(b)
            default: return nil
            }
        }
    }

    var description: String {
        guard let a = address else { return "?" }
        if case .ipv6 = a { return "[\(a)]:\(port)" }
        return "\(a):\(port)"
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }

    mutating func withMutableSockaddr<R>(_ body: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> R) -> R {
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let r = withUnsafeMutableBytes(of: &storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &len) }
        length = len
        return r
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension Syscall {
    /// The TCP port on 127.0.0.1 that our child `pid` listens on, or nil
    /// while it listens on none. rclone 1.60's `serve http --addr
    /// 127.0.0.1:0` binds a free port without printing it; asking the
    /// kernel (the listening sockets in /proc/PID/net/tcp whose inodes are
    /// among the "socket:[N]" links in /proc/PID/fd) names the port that
    /// process holds, where choosing a port first and passing it would
    /// race any other process for it.
    public static func listeningLoopbackPort(of pid: Int32) throws -> UInt16? {
        var inodes = Set<Substring>()
        for name in try listDirectory("/proc/\(pid)/fd") {
            // A descriptor closed between the listing and the readlink is no socket of interest.
            guard let link = try? readLink(FilePath("/proc/\(pid)/fd/" + String(decoding: name, as: UTF8.self))) else { continue }
            let text = String(decoding: link, as: UTF8.self)
            if text.hasPrefix("socket:["), text.hasSuffix("]") { inodes.insert(Substring(String(text.dropFirst(8).dropLast()))) }
        }
        guard !inodes.isEmpty else { return nil }
        let fd = try open("/proc/\(pid)/net/tcp")
        defer { close(fd) }
        // /proc reports a size of 0: read to the end, within a bound (a
        // line is 150 bytes; 4 MiB is 28,000 sockets in this namespace).
        var table = [UInt8](repeating: 0, count: 4 << 20)
        let n = try readFully(fd, into: &table)
        for line in String(decoding: table[..<n], as: UTF8.self).split(separator: "\n").dropFirst() {
            let f = line.split(separator: " ")
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            guard f.count > 9, f[3] == "0A", inodes.contains(f[9]) else { continue }
            let local = f[1].split(separator: ":")
            // 0100007F is 127.0.0.1 as the kernel prints it (host byte order).
            guard local.count == 2, local[0] == "0100007F", let port = UInt16(local[1], radix: 16) else { continue }
            return port
        }
        return nil
    }
}

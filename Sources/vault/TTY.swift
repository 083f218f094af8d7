import System
/// The controlling terminal, opened as /dev/tty: prompts go there even when
/// stdin and stdout are redirected (`vault get x | less`). Closed on deinit.
final class TTY {
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// nil when the process has no controlling terminal (cron, CI, `setsid`).
    static func open() -> TTY? {
        guard let fd = try? Syscall.open("/dev/tty", [.readWrite, .noControllingTerminal]) else { return nil }
        return TTY(fd: fd)
    }

    deinit { Syscall.close(fd) }

    enum LineRead: Equatable {
        /// A line of this many bytes, line end excluded.
        case line(Int)
        /// Ctrl-D with nothing typed.
        case endOfFile
        /// More than `buffer.count - 1` bytes before the newline.
        case tooLong
    }

    /// Reads one line into `buffer`, which has a fixed size and is never
    /// grown: growing would reallocate and leave a copy of the secret in
    /// freed memory that nobody zeroes.
    func readLine(into buffer: inout [UInt8]) throws -> LineRead {
        let fd = self.fd
        return try buffer.withUnsafeMutableBytes { try Self.readLine(fd, $0) }
    }

    private static func readLine(_ fd: Int32, _ raw: UnsafeMutableRawBufferPointer) throws -> LineRead {
        var count = 0
        while count < raw.count {
            let n = try Syscall.readSome(fd, UnsafeMutableRawBufferPointer(rebasing: raw[count...]))
            if n == 0 { return count == 0 ? .endOfFile : .line(count) }
            if let newline = raw[count..<count + n].firstIndex(of: UInt8(ascii: "\n")) {
                let crlf = newline > 0 && raw[newline - 1] == UInt8(ascii: "\r")
                return .line(crlf ? newline - 1 : newline)
            }
            count += n
        }
        return .tooLong
    }
}

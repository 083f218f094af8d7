import System
import Dispatch
import Synchronization
import VaultCore

/// All user-facing output goes through here, and nowhere else:
///
/// - messages on stderr: `vault: <message>` (lower case, no trailing period),
///   then optional `hint: <text>` lines; warnings as `vault: warning: ...`;
/// - data (item contents, listings, help) on stdout;
/// - prompts on the controlling terminal (/dev/tty), never on stdout/stderr,
///   so they work with both redirected.
///
/// vault never writes colour or other escape sequences (NO_COLOR is honoured
/// trivially), and control characters from names or paths are shown escaped,
/// so a hostile item name cannot drive the user's terminal.
struct Terminal: Sendable {
    /// `--quiet`: notes are dropped. Warnings and errors are always shown,
    /// since the exit code alone cannot say what was skipped or why.
    let quiet: Bool

    static let program = "vault"
    static let version = "0.1.0"

    // MARK: stderr

    func report(_ error: CLIError) {
        var lines = ["\(Self.program): \(error.message)"]
        lines += error.hints.map { "hint: \($0)" }
        Self.writeStderr(lines)
    }

    func warning(_ message: String, hints: [String] = []) {
        Self.writeStderr(["\(Self.program): warning: \(message)"] + hints.map { "hint: \($0)" })
    }

    /// Progress and confirmations ("created vault at ..."); silent with --quiet.
    func note(_ message: String, hint: String? = nil) {
        if !quiet { Self.writeStderr(["\(Self.program): \(message)"] + (hint.map { ["hint: \($0)"] } ?? [])) }
    }

    /// Writes `lines` to stderr in one write(2), control characters escaped.
    /// Failure to write to stderr has nowhere to be reported, so it is ignored.
    static func writeStderr(_ lines: [String]) {
        Syscall.writeText(2, lines.map(printable).joined(separator: "\n") + "\n")
    }

    /// `text` with every character that could steer a terminal or disguise
    /// what is shown escaped: C0/C1 controls and DEL as `\xNN`, and format
    /// characters (bidirectional overrides such as U+202E, zero-width
    /// characters) and line/paragraph separators as `\u{XXXX}`.
    static func printable(_ text: String) -> String {
        // Most names are plain printable ASCII: nothing to look up.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x20 || (0x7f...0x9f).contains(v) {
                let hex = String(v, radix: 16, uppercase: true)
                out += "\\x" + (hex.count < 2 ? "0" : "") + hex
            } else if v >= 0xa0 && isInvisible(scalar) {
                out += "\\u{" + String(v, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Format characters (Cf) and line/paragraph separators (Zl, Zp).
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    // MARK: stdout

    /// Item data to stdout, unchanged.
    func write(_ bytes: UnsafeRawBufferPointer) throws(CLIError) {
        do { try Syscall.writeFully(1, bytes) } catch { throw Self.stdoutFailed(error) }
    }

    /// One line of output data (a listing, JSON) to stdout. Names inside
    /// `line` should already have gone through `printable` where they are
    /// shown to a person rather than to a JSON parser.
    func printLine(_ line: String) throws(CLIError) {
        do { try Syscall.writeFully(1, Array((line + "\n").utf8)) } catch { throw Self.stdoutFailed(error) }
    }

    /// Much output data (a listing of 100,000 items), written in 64 KiB
    /// pieces rather than one write(2) per line; `emit` adds no newline.
    func printBuffered(_ body: (_ emit: (String) throws(CLIError) -> Void) throws -> Void) throws {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        func flush() throws(CLIError) {
            do { try Syscall.writeFully(1, buffer) } catch { throw Self.stdoutFailed(error) }
            buffer.removeAll(keepingCapacity: true)
        }
        try body { (text: String) throws(CLIError) in
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 16 { try flush() }
        }
        try flush()
    }

    /// A reader that stopped early (`vault list | head -1`) is not a
    /// failure to report: exit 141 in silence, as `cat` and `git` do when
    /// SIGPIPE kills them (we ignore SIGPIPE, so it arrives as EPIPE).
    static func stdoutFailed(_ error: any Error) -> CLIError {
        if (error as? SystemError)?.errno == .brokenPipe { return .brokenPipe }
        return CLIError(message: "cannot write to standard output: \(error.systemReason)")
    }

    // MARK: prompts

    /// Asks a yes/no question on the terminal (echo on); true only for "y"
    /// or "yes". No terminal: nil, and the caller asks for --yes instead.
    func confirm(_ question: String) -> Bool? {
        guard let tty = TTY.open() else { return nil }
        Syscall.writeText(tty.fd, "\(question) [y/N] ")
        var buffer = [UInt8](repeating: 0, count: 16)
        guard case .line(let n)? = try? tty.readLine(into: &buffer) else { return false }
        let answer = String(decoding: buffer[..<n], as: UTF8.self).lowercased()
        return answer == "y" || answer == "yes"
    }

    /// Asks for one line on the terminal, echo on (a move code read off
    /// another screen). No terminal: nil.
    func askLine(_ prompt: String, limit: Int) throws(CLIError) -> String? {
        guard let tty = TTY.open() else { return nil }
        Syscall.writeText(tty.fd, prompt)
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        let read: TTY.LineRead
        do { read = try tty.readLine(into: &buffer) } catch {
            throw CLIError(message: "cannot read from the terminal: \(error.systemReason)")
        }
        switch read {
        case .line(let n): return String(decoding: buffer[..<n], as: UTF8.self)
        case .endOfFile: throw CLIError(message: "nothing entered")
        case .tooLong: throw CLIError(message: "line longer than \(limit) bytes")
        }
    }

    /// Whether standard output is a terminal (where a QR code is worth drawing).
    var stdoutIsTerminal: Bool { Syscall.isTerminal(1) }

    /// Asks on the terminal with echo off and reads one line into `buffer`
    /// (which the caller zeroes), returning the byte count without the line
    /// end. The terminal mode is restored on every path: by the defer, or by
    /// the interrupt cleanup if Ctrl-C arrives while we wait.
    func readSecret(prompt: String, from tty: TTY, into buffer: inout [UInt8]) throws(CLIError) -> Int {
        let read: TTY.LineRead
        do {
            // Echo goes off before the prompt appears, so nothing typed after
            // seeing the prompt can echo.
            let fd = tty.fd
            let mode = try Syscall.disableEcho(fd)
            let cleanup = Interrupts.register {
                Syscall.restore(fd, mode)
                Syscall.writeText(fd, "\n")
            }
            defer {
                Syscall.restore(fd, mode)
                Interrupts.unregister(cleanup)
                Syscall.writeText(fd, "\n")  // the user's Enter did not echo
            }
            Syscall.writeText(fd, prompt)
            read = try tty.readLine(into: &buffer)
        } catch {
            throw CLIError(message: "cannot read the password from the terminal: \(error.systemReason)")
        }
        switch read {
        case .line(let count): return count
        case .endOfFile: throw CLIError(message: "no password entered")
        case .tooLong: throw CLIError(message: "password longer than \(buffer.count - 1) bytes")
        }
    }
}

/// Standard output as a VaultCore sink (`vault get NAME` with no -o), so item
/// bytes too leave through Terminal and a closed pipe reads as a clear error.
final class StandardOutputSink: ByteSink {
    private let terminal: Terminal
    init(_ terminal: Terminal) { self.terminal = terminal }
    func write(_ bytes: UnsafeRawBufferPointer) throws { try terminal.write(bytes) }
}

extension Terminal {
    /// A status line such as "unlocking…" on stderr while something slow runs
    /// with no output of its own; nil off a terminal or with --quiet. Wiped
    /// by `finish` (the line is ours: nothing else was written after it).
    func transient(_ text: String) -> ProgressLine? {
        guard !quiet, Syscall.isTerminal(2) else { return nil }
        let line = "\(Terminal.program): \(text)"
        Syscall.writeText(2, line)
        return ProgressLine(drawn: line.count)
    }
}

/// One progress line on stderr for long work: bytes, rate, time left when
/// the total is known. Only when stderr is a terminal and not --quiet, and
/// never on a screen where the command's own output or the user's typing
/// goes (`sharing`: get to a terminal, `add -` typed in): wiping the line
/// there would erase bytes that are not ours. Drawn only once the work has
/// run half a second (quick commands never flash one), redrawn at most ten
/// times a second with a carriage return (no escape sequences), and wiped by
/// `finish`. `update` may come from a worker thread.
final class ProgressLine: Sendable {
    private let label: String
    private let total: UInt64?
    private let start = DispatchTime.now().uptimeNanoseconds
    private let state = Mutex((last: UInt64(0), width: 0))
    /// Wipes the line if Ctrl-C comes while it is drawn, so "interrupted"
    /// starts a clean line instead of following the progress and the "^C"
    /// the terminal echoed.
    private let wipeOnInterrupt = Mutex<Interrupts.Token?>(nil)
    static let firstDraw: UInt64 = 500_000_000
    /// No time left is shown before this much work has been timed.
    static let firstEstimate: UInt64 = 1_000_000_000

    private init(label: String, total: UInt64?) {
        (self.label, self.total) = (label, total)
        guardInterrupts()
    }

    /// A line already drawn (`Terminal.transient`), for `finish` to wipe.
    fileprivate init(drawn width: Int) {
        (label, total) = ("", nil)
        state.withLock { $0.width = width }
        guardInterrupts()
    }

    private func guardInterrupts() {
        let token = Interrupts.register { [weak self] in
            guard let self else { return }
            // Two more columns: the "^C" echoed after the line.
            self.state.withLock { s in
                if s.width > 0 { Syscall.writeText(2, "\r" + String(repeating: " ", count: s.width + 2) + "\r") }
                s.width = 0
            }
        }
        wipeOnInterrupt.withLock { $0 = token }
    }

    deinit { if let token = wipeOnInterrupt.withLock({ $0 }) { Interrupts.unregister(token) } }

    /// nil when there is nobody to show it to, or the screen is shared
    /// with one of the descriptors in `sharing` (0: input typed at the
    /// terminal, 1: output written to it).
    static func start(_ terminal: Terminal, _ label: String, total: UInt64?, sharing: [Int32] = []) -> ProgressLine? {
        guard !terminal.quiet, Syscall.isTerminal(2), !sharing.contains(where: Syscall.isTerminal) else { return nil }
        return ProgressLine(label: Terminal.printable(label), total: total)
    }

    func update(_ done: UInt64) { update(done, counting: nil) }

    /// The same with a count before the bytes ("1,204 files, 3.1 GiB, ...":
    /// `vault backup`), or with a total learnt as the work goes (rclone's
    /// statistics: `of`, when the line was started without one).
    /// `reading`: bytes read so far of those there are to read, when that
    /// differs from `done` (a backup covers unchanged files without reading
    /// them): the time left is then what is left to read at the rate read.
    func update(_ done: UInt64, counting: String? = nil, of total: UInt64? = nil,
                reading: (done: UInt64, total: UInt64)? = nil) {
        let total = self.total ?? total.flatMap { $0 > 0 ? $0 : nil }
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { s in
            guard now - start >= Self.firstDraw, now - s.last >= 100_000_000 else { return }
            s.last = now
            let seconds = Double(now - start) / 1e9
            // Never more than the total (a file that grew while read).
            let shown = total.map { min(done, $0) } ?? done
            let rate = seconds > 0 ? Double(shown) / seconds : 0
            var text = "\(label): " + (counting.map { $0 + ", " } ?? "") + Format.size(shown)
            if let total, total > 0 { text += " of \(Format.size(total))" }
            text += String(format: ", %@/s", Format.size(UInt64(min(rate, 1e18))))
            // The total may be a drop-in's claim (up to 2^64 - 1): no integer
            // conversion of a quotient that could pass Int.max.
            // (done, total) the time left is measured on.
            let measured = reading.map { (min($0.done, $0.total), $0.total) } ?? total.map { (shown, $0) }
            if let (read, toRead) = measured, toRead > read, read > 0, now - start >= Self.firstEstimate {
                let left = Double(toRead - read) / (Double(read) / seconds)
                text += left < 1e7 ? ", \(Int(left)) s left" : ", more than 100 days left"
            }
            let padded = text.padding(toLength: max(text.count, s.width), withPad: " ", startingAt: 0)
            s.width = text.count
            Syscall.writeText(2, "\r" + padded)
        }
    }

    func finish() {
        state.withLock { s in
            if s.width > 0 { Syscall.writeText(2, "\r" + String(repeating: " ", count: s.width) + "\r") }
            s.width = 0
        }
        if let token = wipeOnInterrupt.withLock({ t in defer { t = nil }; return t }) { Interrupts.unregister(token) }
    }
}

/// Standard output when it is a terminal: the first 8 KiB are held back
/// and looked at, and an item that is not text (a NUL byte or invalid
/// UTF-8, as `file` and git judge it) is refused before a byte reaches the
/// screen. Later bytes pass straight through.
final class TextOnlySink: ByteSink {
    static let sniff = 8192
    private let out: ByteSink
    private let name: String
    private var held: [UInt8] = []
    private var passing = false

    init(_ out: ByteSink, name: String) { (self.out, self.name) = (out, name) }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if passing { return try out.write(bytes) }
        held.append(contentsOf: bytes)
        if held.count >= Self.sniff { try release(complete: false) }
    }

    /// The refusal, the same whether judged by the bytes or by the name.
    static func refusal(_ name: String) -> CLIError {
        CLIError(message: "'\(name)' is not text; not writing it to the terminal",
                 hints: ["use -o FILE, or -o - to write it here anyway"])
    }

    /// Extensions of formats that are never text (compressed, media,
    /// office, disk images): such an item is refused before the password
    /// is asked for, not after (issue 43, item 7). Any other name is
    /// judged by its first bytes once decrypted.
    static let binaryExtensions: Set<String> = [
        "7z", "avi", "bin", "bz2", "db", "deb", "doc", "docx", "exe", "flac", "gif", "gpg", "gz", "heic", "img",
        "iso", "jpeg", "jpg", "kdbx", "m4a", "mkv", "mov", "mp3", "mp4", "odp", "ods", "odt", "ogg", "pdf", "png",
        "ppt", "pptx", "rar", "sqlite", "tar", "tgz", "tif", "tiff", "wav", "webm", "webp", "xls", "xlsx", "xz",
        "zip", "zst",
    ]

    /// Whether `name`'s extension is one of `binaryExtensions`.
    static func isBinaryByName(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return binaryExtensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// After the last byte: a short item is judged whole.
    func flush() throws { if !passing { try release(complete: true) } }

    private func release(complete: Bool) throws {
        guard Self.looksLikeText(held, complete: complete) else {
            held.removeAll()
            throw Self.refusal(name)
        }
        passing = true
        try held.withUnsafeBytes { try out.write($0) }
        held = []
    }

    /// No NUL and valid UTF-8; a sequence cut by the end of the sample
    /// (`complete` false) is not held against it.
    static func looksLikeText(_ bytes: [UInt8], complete: Bool) -> Bool {
        if bytes.contains(0) { return false }
        var sample = bytes[...]
        if !complete {
            // Drop up to 3 trailing bytes of a sequence the cut may have split.
            var cut = 0
            while cut < 3, let last = sample.last, last & 0xC0 == 0x80 { sample = sample.dropLast(); cut += 1 }
            if let last = sample.last, last >= 0xC0 { sample = sample.dropLast() }
        }
        var decoder = UTF8()
        var iterator = sample.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

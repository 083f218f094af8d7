/// Which process made a scratch directory, a staging directory or an
/// output record: its pid and the start time the kernel gives it (clock
/// ticks since boot, /proc/PID/stat field 22), so a pid reused by a later
/// process is another stamp. Names that carry one say who made them, and a
/// later run erases what a process that no longer runs left behind.
public struct ProcessStamp: Equatable, Sendable {
    public let pid: Int32
    public let start: UInt64

    public init(pid: Int32, start: UInt64) { (self.pid, self.start) = (pid, start) }

    /// This process's stamp; /proc that cannot tell is an error (without a
    /// stamp, what this process leaves could be taken for abandoned).
    public static func current() throws -> ProcessStamp {
        let pid = Syscall.processID
        guard let start = Syscall.startTime(of: pid) else {
            throw SystemError(operation: .read, path: "/proc/\(pid)/stat", errno: .noSuchFile)
        }
        return ProcessStamp(pid: pid, start: start)
    }

    /// "PID<separator>START".
    public func text(separator: Character = "-") -> String { "\(pid)\(separator)\(start)" }

    /// The stamp at the front of `fields` (a name split on its separator):
    /// nil unless the first two are a pid and a start time.
    public init?<S: StringProtocol>(fields: [S]) {
        guard fields.count >= 2, let pid = Int32(fields[0]), let start = UInt64(fields[1]) else { return nil }
        self.init(pid: pid, start: start)
    }

    /// Whether the process that made this stamp still runs (a zombie does
    /// not); a /proc that cannot be read says it does (Syscall.processRuns:
    /// what this decides is whether its files are erased).
    public var isRunning: Bool { Syscall.processRuns(pid, since: start) }
}

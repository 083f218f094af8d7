import System

/// What a restore of many items promises (docs/ARCHITECTURE.md, "What a
/// restore promises"): files are written nameless and unsynced
/// (`exportUncommitted`), then named in groups of `groupSize`, the
/// descriptors held open: one syncfs makes a group durable, then each file
/// is named if its name is still free, and `finish` fsyncs the directory
/// once if any was named. One sync per group, not one per file, and still
/// no restored name before its bytes are on disk.
public final class OutputGroups {
    /// Files waiting for their names at most (each holds a descriptor).
    public static let groupSize = 128

    private let directory: String
    private var waiting: [(output: NewPlaintextFile, named: (Error?) -> Void)] = []
    private var anyNamed = false

    /// `directory`: where the files are named (fsync'ed by `finish`).
    public init(directory: String) { self.directory = directory }

    /// Files written and waiting for their names.
    public var count: Int { waiting.count }

    /// Adds a written file; `named` learns, once its group is made durable
    /// and named, nil or why it could not be (its name was taken, the sync
    /// failed). A full group is committed at once.
    public func add(_ output: NewPlaintextFile, named: @escaping (Error?) -> Void) {
        // The disk works on it while the next ones are written.
        output.file.startWritebackOfRest()
        waiting.append((output, named))
        if waiting.count == Self.groupSize { flush() }
    }

    /// Makes the waiting files durable (one syncfs, or an fsync each for a
    /// few: Syscall.makeDurable), then names them in
    /// the order they were added.
    public func flush() {
        defer { waiting = [] }
        guard !waiting.isEmpty else { return }
        var synced: Error?
        do { try Syscall.makeDurable(waiting.map(\.output.file.fd)) } catch { synced = error }
        for w in waiting {
            do {
                if let synced { throw synced }
                try w.output.commit(sync: false, syncDirectory: false)
                anyNamed = true
                w.named(nil)
            } catch {
                w.named(error)
            }
        }
    }

    /// Names what waits, then fsyncs the directory once if any file was named.
    public func finish() throws {
        flush()
        if anyNamed { try Syscall.fsyncDirectory(directory) }
    }
}

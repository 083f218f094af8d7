import Foundation
import Synchronization
import System

/// The reads of a backup, on a thread of their own (issue 45). The walk
/// lists directories, looks at each entry and decides what to read; this
/// thread opens, reads and cuts those files and hands their pieces to the
/// PiecePipeline, in the order the walk handed them in, so the packs are
/// what one thread would have made. The walk's one thread had done both,
/// and on many small files it was the first backup's limit while the
/// pipeline's workers waited for it.
final class FileReader: @unchecked Sendable {
    // @unchecked Sendable: `queue`, `head`, `busy`, `callerWaits`, the two
    // counts, `failure` and `closed` are used under `condition`. The buffer
    // and the pipeline's submitting side are the reader thread's, and the
    // caller's once `finish` has returned; a request's outcome is the
    // reader's until `finish` or `wait(through:)` has returned for it (the
    // condition's lock orders the two).

    /// A file to read; what reading it found is its `outcome` once
    /// `finish`, or `wait(through:)` for it or a later one, returns.
    final class Request {
        let path: [UInt8], relative: [UInt8], status: FileStatus
        /// Its pieces in the pipeline.
        let pieces = PendingPieces()
        fileprivate(set) var outcome = Outcome.waiting
        /// Its place in the order handed in (set by `read`).
        fileprivate(set) var number = 0
        init(path: [UInt8], relative: [UInt8], status: FileStatus) { (self.path, self.relative, self.status) = (path, relative, status) }
    }

    enum Outcome {
        case waiting
        /// Read to its end; whether its size, mtime or ctime differed
        /// after, and its extended attributes (BackupRun.attributes).
        case read(changed: Bool, attributes: [ExtendedAttribute])
        /// It could not be opened or read (gone, not ours, an I/O error).
        case unreadable
    }

    /// Files queued at most: the walk waits beyond (memory stays flat
    /// however far ahead it could run). A few thousand small files are a
    /// few MiB of reading ahead.
    static let maxQueued = 2048
    /// An idle reader is woken once this many files wait (or by `finish`):
    /// a wake-up per file, when the reader keeps up with the walk, cost
    /// both threads a context switch per file.
    static let wakeBatch = 64

    private let pipeline: PiecePipeline
    private let buffer: PageBuffer
    private let condition = NSCondition()
    private var queue: [Request] = []
    private var head = 0
    private var busy = false, closed = false
    /// What the caller waits for, if it does: woken for that only, not
    /// after every file (the two threads took turns a file at a time).
    private var callerWaits: Wait?
    private enum Wait { case room, done, through(Int) }
    /// Requests handed in, and read (in that order).
    private var handedIn = 0, completed = 0
    private var failure: (any Error)?
    /// For the progress line and the summary: read from any thread.
    let filesRead = Atomic<UInt64>(0), bytesRead = Atomic<UInt64>(0)
    /// Bytes read so far of the file being read.
    let readingFile = Atomic<UInt64>(0)
    /// The directory of the last file opened, open (-1: it could not be):
    /// files are opened in it by name, one lookup each, where a whole
    /// path was walked again for each (issue 45). The reader thread's.
    private var directory: (path: ArraySlice<UInt8>, fd: Int32)?

    init(pipeline: PiecePipeline) throws {
        self.pipeline = pipeline
        buffer = try PageBuffer(count: 2 * Chunker.maxSize)
        Thread { [self] in run() }.start()
    }

    deinit { close() }

    /// The thread ends once what was queued is read.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Queues `request`; waits while `maxQueued` are, calling `tick` now
    /// and then (a progress line moves while one large file is read).
    /// Throws the vault's failure to store an earlier file's pieces.
    func read(_ request: Request, tick: () -> Void) throws {
        condition.lock()
        defer { condition.unlock() }
        while queue.count - head >= Self.maxQueued, failure == nil { callerWait(.room, tick) }
        if let failure { throw failure }
        if head > Self.maxQueued { queue.removeFirst(head); head = 0 }
        request.number = handedIn
        handedIn += 1
        queue.append(request)
        if !busy, queue.count - head >= Self.wakeBatch { condition.broadcast() }
    }

    /// Waits until every queued file is read and its pieces are handed to
    /// the pipeline; then the outcomes, the pipeline and `cut` are the caller's.
    func finish(tick: () -> Void) throws {
        condition.lock()
        defer { condition.unlock() }
        if !busy { condition.broadcast() }
        while busy || queue.count > head, failure == nil { callerWait(.done, tick) }
        if let failure { throw failure }
    }

    /// Waits until `request` and every file before it is read, while the
    /// reader goes on with the rest; their pieces are handed to the pipeline
    /// as soon as the reader runs out of files or fills a job with later
    /// ones (PiecePipeline.take waits for them).
    func wait(through request: Request, tick: () -> Void) throws {
        condition.lock()
        defer { condition.unlock() }
        if !busy { condition.broadcast() }
        while completed <= request.number, failure == nil { callerWait(.through(request.number), tick) }
        if let failure { throw failure }
    }

    private func callerWait(_ what: Wait, _ tick: () -> Void) {
        callerWaits = what
        _ = condition.wait(until: Date(timeIntervalSinceNow: 0.25))  // a timeout only ticks
        callerWaits = nil
        condition.unlock()
        tick()
        condition.lock()
    }

    private func run() {
        condition.lock()
        while true {
            while queue.count == head, !closed { condition.wait() }
            if queue.count == head { break }
            let request = queue[head]
            head += 1
            // After a failure the rest is not read: the backup ends with it.
            let skip = failure != nil
            busy = !skip
            condition.unlock()
            let result = skip ? .success(()) : Result { try read(request) }
            condition.lock()
            if case .failure(let error) = result { failure = failure ?? error }
            completed += 1
            if queue.count == head, failure == nil {
                // Out of files: what was cut goes to the workers now, not
                // when later files fill the job (`take` waits for it), and
                // before `finish` gives the pipeline to the caller.
                condition.unlock()
                let flushed = Result { try pipeline.flush() }
                condition.lock()
                if case .failure(let error) = flushed { failure = failure ?? error }
            }
            busy = false
            let waiting = queue.count - head
            switch callerWaits {
            case .room? where waiting <= Self.maxQueued / 2 || failure != nil: condition.broadcast()
            case .done? where waiting == 0 || failure != nil: condition.broadcast()
            case .through(let n)? where completed > n || failure != nil: condition.broadcast()
            default: break
            }
        }
        condition.unlock()
        if let d = directory, d.fd >= 0 { Syscall.close(d.fd) }
    }

    private func read(_ request: Request) throws {
        guard let fd = open(request.path) else {
            request.outcome = .unreadable
            return
        }
        defer { Syscall.close(fd) }
        let attributes = BackupRun.attributes(fd: fd)
        guard try cut(fd, into: request.pieces, size: request.status.size) else {
            request.outcome = .unreadable
            return
        }
        let st = request.status
        let after = try? Syscall.status(fd)
        let changed = after.map { $0.size != st.size || $0.modified != st.modified || $0.modifiedNanoseconds != st.modifiedNanoseconds
            || $0.changed != st.changed || $0.changedNanoseconds != st.changedNanoseconds } ?? true
        request.outcome = .read(changed: changed, attributes: attributes)
    }

    /// Opens the regular file at `path` (absolute) to read, as
    /// FileHandleFD(readingFrom:) would: no link followed, never blocking
    /// (a FIFO put there meanwhile), anything but a regular file refused.
    private func open(_ path: [UInt8]) -> Int32? {
        guard let slash = path.lastIndex(of: 0x2f) else { return nil }
        let parent = slash == 0 ? path[...0] : path[..<slash], name = Array(path[(slash + 1)...])
        if directory?.path != parent {
            if let d = directory, d.fd >= 0 { Syscall.close(d.fd) }
            // Its files are unreadable (named by the walk), like the directory.
            let fd = (try? Syscall.open(FilePath(bytes: Array(parent)), [.directory, .noFollow])) ?? -1
            directory = (parent, fd)
        }
        guard let d = directory, d.fd >= 0,
              let fd = try? Syscall.open(in: d.fd, name, [.noFollow, .nonBlocking], display: "") else { return nil }
        // Not a regular file (replaced since the walk looked): unreadable.
        guard let st = try? Syscall.status(fd), st.kind == .regular else {
            Syscall.close(fd)
            return nil
        }
        return fd
    }

    /// Reads `fd` to its end and hands its pieces to the pipeline; false if
    /// a read fails (the source's failure: the file is unreadable, skipped
    /// and counted). A failure to store what was read is the vault's, and
    /// is thrown. The reader thread's; the caller's once `finish` returned.
    ///
    /// `size`: the file's size when the walk looked. Its reads stop there,
    /// as tar's do: the read(2) that would return 0 at the end, one more
    /// system call per file, was the most frequent call of a small-file
    /// backup (issue 45). A file that grew since is cut at that size and
    /// found changed by the status taken after its read (`read`), as one
    /// written to during the read is. Size 0 (empty, or a pseudo-file whose
    /// size says nothing, as in /proc) is read to its end.
    func cut(_ fd: Int32, into pieces: PendingPieces, size: UInt64 = 0) throws -> Bool {
        filesRead.add(1, ordering: .relaxed)
        defer { readingFile.store(0, ordering: .relaxed) }
        let raw = buffer.raw
        var filled = 0, eof = false
        var left = size > 0 ? size : .max
        while true {
            while filled < raw.count && !eof {
                // EIO, a file on a network share gone away: the source's.
                let n: Int, asked = Int(min(UInt64(raw.count - filled), left))
                do { n = try Syscall.readFully(fd, UnsafeMutableRawBufferPointer(rebasing: raw[filled..<(filled + asked)])) } catch {
                    return false
                }
                // readFully stops short only where read(2) said 0 (the end):
                // asking again would be one more read per file, 0 bytes each.
                if n < asked { eof = true }
                left -= UInt64(n)
                if left == 0 { eof = true }
                if n > 0 {
                    filled += n
                    bytesRead.add(UInt64(n), ordering: .relaxed)
                    readingFile.add(UInt64(n), ordering: .relaxed)
                }
            }
            var start = 0
            while start < filled, eof || filled - start >= Chunker.maxSize {
                let rest = UnsafeRawBufferPointer(rebasing: raw[start..<filled])
                let n = Chunker.cut(rest)
                try pipeline.submit(UnsafeRawBufferPointer(rebasing: rest[..<n]), of: pieces)
                start += n
            }
            if eof { return true }
            if start > 0 {
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: filled - start)
                filled -= start
            }
        }
    }
}

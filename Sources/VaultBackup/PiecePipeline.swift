import Foundation
import VaultCodecs

/// The pieces of the files a backup reads, named, compressed and stored
/// on other threads while the next files are read (issue 45: the first
/// backup kept one core busy; the reads and the cutting are FileReader's
/// thread's, the keyed ids and zstd, most of the work, go to `threads`
/// workers). Pieces are handed in by one thread at a time (the reader's,
/// or the walk's while the reader is idle) and stored in the order they
/// were handed in, so packs, offsets and what counts as known are what
/// one thread would have made. A piece's reference is known once `drain`
/// returns; until then a file's pieces are its `PendingPieces`.
final class PiecePipeline: @unchecked Sendable {
    // @unchecked Sendable: the fields below are used under `condition`;
    // `packs` under `packLock` (but `known`, which locks for itself);
    // each worker's encoder is its own.
    /// Pieces handed over together: a hand-over (a lock, a wake-up) per
    /// small file's piece cost more than naming and compressing it.
    private struct Job {
        /// The pieces back to back, `ends` where each ends.
        var bytes: [UInt8] = []
        var ends: [Int] = []
        /// The sequence number of the first piece.
        var first = 0
        /// Per piece, once done: its id and its zstd frame (nil: as it is).
        var results: [(PieceID, [UInt8]?)] = []
        var done = false

        func piece(_ k: Int) -> Range<Int> { (k == 0 ? 0 : ends[k - 1])..<ends[k] }
    }
    /// The job the caller is filling (the caller's alone), and the
    /// sequence number its next piece gets.
    private var filling = Job()
    private var nextPiece = 0
    /// A job is handed over at this many bytes or pieces.
    static let jobBytes = 256 << 10, jobPieces = 256
    private let condition = NSCondition()
    private var jobs: [Int: Job] = [:]
    /// Job numbers: the next to hand in, to work on, to store.
    private var nextSubmit = 0, nextWork = 0, nextStore = 0
    private var storing = false
    private var inFlight = 0
    /// Who waits, so that a change wakes only those it concerns: a wake-up
    /// per piece for every thread cost the walk more than its reads.
    /// (Callers: the submitter waiting for room, the walk in `take`; both may wait at once.)
    private var idleWorkers = 0, callersWaiting = 0
    private var failure: (any Error)?
    private var closed = false
    /// Pieces with sequence numbers below this are stored.
    private var storedThrough = 0
    /// References of stored pieces not yet taken by `drain` (piece sequence → reference).
    private var stored: [Int: PieceRef] = [:]
    /// Pieces that were stored already (by this host, or earlier in this run).
    private var reused = 0

    private let key: PieceKey
    private let packs: PackWriter
    private let packLock = NSLock()
    /// Bytes handed in and not yet stored, at most (more waits): memory
    /// stays flat however far the walk could run ahead. 8 MiB keeps the
    /// workers fed (32 jobs of small files, several pieces of large ones);
    /// 32 MiB had only added pages to fault in (issue 45).
    static let maxInFlight = 8 << 20

    init(key: PieceKey, packs: PackWriter, threads: Int) throws {
        (self.key, self.packs) = (key, packs)
        for _ in 0..<max(1, threads) {
            let encoder = OwnEncoder(value: try ZstdPieceEncoder())
            Thread { [self] in work(encoder.value) }.start()
        }
    }

    deinit { close() }

    /// Runs `body` while no worker touches the packs: the backup's own
    /// thread stores trees through this. (What the cache knows is asked
    /// under the lander's lock instead, PackWriter's `known` and
    /// `knowsAll`; the packs land on the lander's thread, one at a time.)
    func withPacks<T>(_ body: () throws -> T) rethrows -> T {
        packLock.lock()
        defer { packLock.unlock() }
        return try body()
    }

    /// The workers end once what was handed in is done.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()   // every worker, to end
        condition.unlock()
    }

    /// Hands in a piece of `file` (copied): its reference comes with `drain`.
    func submit(_ piece: UnsafeRawBufferPointer, of file: PendingPieces) throws {
        if filling.ends.isEmpty {
            filling.first = nextPiece
            // Room for a whole job at once: grown by doubling, a job of
            // small files was copied and faulted in several times over.
            filling.bytes.reserveCapacity(max(Self.jobBytes + (64 << 10), piece.count))
        }
        filling.bytes.append(contentsOf: piece)
        filling.ends.append(filling.bytes.count)
        file.sequences.append(nextPiece)
        file.size += UInt64(piece.count)
        nextPiece += 1
        if filling.bytes.count >= Self.jobBytes || filling.ends.count >= Self.jobPieces { try handOver() }
    }

    /// The job being filled goes to the workers.
    private func handOver() throws {
        guard !filling.ends.isEmpty else { return }
        let job = filling
        filling = Job()
        condition.lock()
        defer { condition.unlock() }
        while inFlight > 0, inFlight + job.bytes.count > Self.maxInFlight, failure == nil { callerWait() }
        if let failure { throw failure }
        jobs[nextSubmit] = job
        nextSubmit += 1
        inFlight += job.bytes.count
        // Only workers wait while the caller runs: one of them is enough.
        if idleWorkers > 0 { condition.signal() }
    }

    /// Waits until every piece handed in is stored, then gives `files`
    /// their references; returns how many pieces were stored already.
    /// The first failure of any piece is thrown here (or by `submit`).
    func drain(_ files: [PendingPieces]) throws -> Int {
        try handOver()
        // Jobs cover the sequence numbers without a gap: all stored is
        // everything below the next piece's number.
        return try references(for: files, once: nextPiece)
    }

    /// Hands the job being filled to the workers now (the submitter's:
    /// FileReader's, as it runs out of files to read).
    func flush() throws { try handOver() }

    /// Waits until every piece of `files` is stored, then gives them their
    /// references; returns how many pieces were stored already since the
    /// last `take` or `drain`. Unlike `drain`, the submitter may go on
    /// handing in meanwhile: `files` must have been handed in whole and
    /// their last job handed over (`flush`, or later pieces).
    func take(_ files: [PendingPieces]) throws -> Int {
        try references(for: files, once: (files.compactMap(\.sequences.last).max() ?? -1) + 1)
    }

    /// `drain` and `take` once the pieces below sequence `bound` are stored.
    private func references(for files: [PendingPieces], once bound: Int) throws -> Int {
        condition.lock()
        defer { condition.unlock() }
        while storedThrough < bound, failure == nil { callerWait() }
        if let failure { throw failure }
        for f in files {
            f.pieces = f.sequences.map { stored.removeValue(forKey: $0)! }
            f.sequences = []
        }
        defer { reused = 0 }
        return reused
    }

    /// A caller's wait (in `submit`, `drain` or `take`), under `condition`.
    private func callerWait() {
        callersWaiting += 1
        condition.wait()
        callersWaiting -= 1
    }

    private func work(_ encoder: ZstdPieceEncoder) {
        // The job's piece ids are hashed together (libipsec-mb's lanes where they run).
        let lanes = key.lanes()
        condition.lock()
        while true {
            while nextWork == nextSubmit, !closed {
                idleWorkers += 1
                condition.wait()
                idleWorkers -= 1
            }
            if nextWork == nextSubmit { break }
            let number = nextWork
            nextWork += 1
            let job = jobs[number]!
            condition.unlock()
            let result = Result {
                try job.bytes.withUnsafeBytes { all in
                    let pieces = job.ends.indices.map { UnsafeRawBufferPointer(rebasing: all[job.piece($0)]) }
                    return try zip(pieces, try key.ids(of: pieces, lanes: lanes)).map { piece, id -> (PieceID, [UInt8]?) in
                        // A piece stored already is not compressed for
                        // nothing (an edited file's other pieces).
                        if packs.known(id) != nil { return (id, nil) }
                        return (id, try encoder.encode(piece).map(Array.init))
                    }
                }
            }
            condition.lock()
            switch result {
            case .success(let results): (jobs[number]!.results, jobs[number]!.done) = (results, true)
            case .failure(let error): failure = failure ?? error
            }
            storeInOrder()
        }
        condition.unlock()
    }

    /// Stores the pieces that are ready, in order; one thread at a time
    /// (the others go on computing). Called and returns with `condition` held.
    private func storeInOrder() {
        guard !storing else { return }
        storing = true
        while failure == nil, let job = jobs[nextStore], job.done {
            jobs[nextStore] = nil
            condition.unlock()
            let result = Result {
                try job.bytes.withUnsafeBytes { all in
                    try packLock.withLock {
                        try job.results.enumerated().map { k, r -> (PieceRef, Bool) in
                            let piece = UnsafeRawBufferPointer(rebasing: all[job.piece(k)])
                            guard let frame = r.1 else { return try packs.store(piece, id: r.0, frame: nil) }
                            return try frame.withUnsafeBytes { try packs.store(piece, id: r.0, frame: $0) }
                        }
                    }
                }
            }
            condition.lock()
            switch result {
            case .success(let refs):
                for (k, (ref, new)) in refs.enumerated() {
                    stored[job.first + k] = ref
                    if !new { reused += 1 }
                }
                storedThrough = job.first + job.ends.count
            case .failure(let error): failure = failure ?? error
            }
            nextStore += 1
            inFlight -= job.bytes.count
            if callersWaiting > 0 { condition.broadcast() }
        }
        if failure != nil { condition.broadcast() }
        storing = false
    }
}

/// A worker's encoder, handed to its thread and used by it alone.
private struct OwnEncoder: @unchecked Sendable { let value: ZstdPieceEncoder }

/// One file's pieces handed to a PiecePipeline: their sequence numbers
/// until `drain`, then their references. Used by the backup's own thread only.
final class PendingPieces {
    fileprivate(set) var sequences: [Int] = []
    /// The file's length: its pieces' lengths, known as they are handed in.
    fileprivate(set) var size: UInt64 = 0
    /// Set by `drain`.
    fileprivate(set) var pieces: [PieceRef] = []
}

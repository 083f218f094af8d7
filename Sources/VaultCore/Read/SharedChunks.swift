import Dispatch
import Synchronization
import System

/// The last few chunks of one item opened for random access, shared by all
/// its readers (`RandomAccessContent`s of one `OpenedItem`): a mounted
/// folder's files, read one after another, find the chunk where the last
/// one ended already open, and a chunk read ahead for one reader serves any.
///
/// Each chunk is opened once, by the first reader that wants it (on its own
/// thread) or ahead of a forward reader on a shared concurrent queue; others
/// wanting it meanwhile wait for that one opening. An opening holds only its
/// `Slot` and the `ItemReader`, never a reader or this cache, and never
/// waits for anything, so it always ends (the lesson of issue 28's hang:
/// see RandomAccessContent). At most `capacity` slots are kept; one dropped
/// while a reader still copies from it lives until that reader lets go, and
/// the buffer of one nobody holds is kept for the next chunk (two at most),
/// so reading does not map fresh pages for every chunk.
final class SharedChunks: Sendable {
    /// One chunk: its buffer and, once opened, how many content bytes it holds (or why it failed).
    final class Slot: @unchecked Sendable {
        // @unchecked: `result` is written once, before `done` leaves, and read only after `wait()`.
        let index: UInt64
        let buffer: PageBuffer
        private var result: Result<Int, Error>?
        private let done = DispatchGroup()

        init(index: UInt64, buffer: PageBuffer) {
            (self.index, self.buffer) = (index, buffer)
            done.enter()
        }

        func open(_ reader: ItemReader) {
            result = Result { try reader.readChunk(index, into: buffer.raw) }
            done.leave()
        }

        /// The chunk's content bytes at the start of `buffer`, once it is open.
        func wait() throws -> Int {
            done.wait()
            return try result!.get()
        }

        var isOpen: Bool { done.wait(timeout: .now()) == .success }
    }

    /// 4 MiB per item: a reader's chunk and two ahead, and one for a reader elsewhere.
    static let capacity = 4
    /// Slots kept: `capacity`, or more for a reader that reads further ahead.
    private let kept: Int
    private static let spareBuffers = 2
    private static let queue = DispatchQueue(label: "vault.random-access.ahead", attributes: .concurrent)
    private let reader: ItemReader
    /// Most recently used last.
    private let state = Mutex<(slots: [Slot], spare: [PageBuffer])>(([], []))

    init(reader: ItemReader, readAhead: UInt64 = RandomAccessContent.readAhead) {
        self.reader = reader
        kept = max(Self.capacity, Int(readAhead) + 2)
    }

    /// Chunk `index`'s slot, open or being opened (here, if nobody opens it yet).
    func chunk(_ index: UInt64) throws -> Slot {
        let (slot, mine) = try take(index)
        if mine { slot.open(reader) }
        return slot
    }

    /// Starts opening chunk `index` on the shared queue, unless it is kept or being opened.
    func readAhead(_ index: UInt64) {
        // Read-ahead only: the read that needs the chunk takes it again and meets the error.
        guard index < reader.chunkCount, let taken = try? take(index), taken.1 else { return }
        let reader = self.reader
        let slot = taken.0
        Self.queue.async { slot.open(reader) }
    }

    /// The slot for `index`, and whether the caller must open it (a new one).
    private func take(_ index: UInt64) throws -> (Slot, Bool) {
        if let kept = state.withLock({ s -> Slot? in
            guard let i = s.slots.firstIndex(where: { $0.index == index }) else { return nil }
            let slot = s.slots.remove(at: i)
            s.slots.append(slot)
            return slot
        }) { return (kept, false) }
        let buffer = try state.withLock { $0.spare.popLast() } ?? PageBuffer(count: ItemCipher.sealedChunkSize, filled: true)
        let slot = Slot(index: index, buffer: buffer)
        // Another thread may have made one meanwhile: then that one is it.
        return state.withLock { s in
            if let other = s.slots.first(where: { $0.index == index }) {
                if s.spare.count < Self.spareBuffers { s.spare.append(buffer) }
                return (other, false)
            }
            s.slots.append(slot)
            if s.slots.count > kept {
                var dropped = s.slots.removeFirst()
                // Nobody else holds it and its opening ended: its buffer is free.
                if isKnownUniquelyReferenced(&dropped), dropped.isOpen, s.spare.count < Self.spareBuffers {
                    s.spare.append(dropped.buffer)
                }
            }
            return (slot, true)
        }
    }
}

import Dispatch
import Synchronization
import System

/// Reads a backup's packs and repacks (stored items, never compressed:
/// docs/FORMAT.md "Backups") at any offset, through one bounded cache of
/// opened chunks that every pack of the vault shares (issue 45).
///
/// Why one cache for all packs: a restore of the newest of many daily
/// snapshots reads its files' pieces from dozens of packs in turn (one or
/// more per day that changed something), each of them forward. When a
/// snapshot reader kept 4 packs open, each with its own few chunks, nearly
/// every file reopened a pack (its final chunk authenticated again) and
/// opened again the chunk it had just dropped: 50,000 files of a 40-day
/// history took 75 s to restore, restic 5–17 s. Here each pack stays
/// opened (`readerCapacity`), and the chunks of all of them share
/// `capacity` slots, least recently used first out: with fewer packs being
/// read at once than slots, each chunk is authenticated once.
///
/// A reader that reads one pack forward (its reads one after another, each
/// where the last ended: one large file's pieces) asks for `readAhead`: the
/// pack's next chunks are opened meanwhile on another core, as
/// `RandomAccessContent` does. Only such a reader: ahead of every pack of
/// an interleaved restore, the chunks opened ahead would push out the
/// chunks the other packs are still reading.
///
/// Thread-safe: the mount reads snapshots from several threads (under its
/// own lock today), and chunks opened ahead finish on the shared queue.
public final class PackChunks: Sendable {
    /// 64 MiB of opened chunks at most (plus the ones a reader still copies from).
    public static let capacity = 64
    /// Packs kept opened (an ItemReader each: its key, its file
    /// descriptor): 256, or a quarter of the open-file limit where it is low
    /// (read at each opening: a restore raises it meanwhile), or fewer
    /// where each opened pack holds more (`keepOpened`).
    private var readerCapacity: Int {
        let limit = Int(max(4, min(256, Syscall.openFileLimit / 4)))
        return state.withLock { s in s.openedBound.map { min($0, limit) } ?? limit }
    }

    /// Keeps at most `count` packs opened (nil: as many as the open-file
    /// limit allows). A thin vault's opened pack keeps a few of its remote
    /// blocks in memory (RemoteBlobSource): 256 of them were 273 MiB.
    public func keepOpened(_ count: Int?) { state.withLock { $0.openedBound = count.map { max(1, $0) } } }

    /// Keeps at most `count` opened chunks (nil: the capacity it was made
    /// with). A thin vault's remote blocks take memory of their own.
    public func keepChunks(_ count: Int?) { state.withLock { $0.slotBound = count.map { max(4, $0) } } }

    private struct Key: Hashable {
        let item: ByteKey
        let index: UInt64
    }

    private final class Opened: @unchecked Sendable {
        // @unchecked: `last` is touched only under the cache's lock.
        let reader: ItemReader
        /// The chunk the last read of this pack ended in.
        var last: UInt64?
        var used: UInt64 = 0
        init(_ reader: ItemReader) { self.reader = reader }
    }

    private struct State {
        var opened: [ByteKey: Opened] = [:]
        var slots: [Key: (slot: SharedChunks.Slot, used: UInt64)] = [:]
        var spare: [PageBuffer] = []
        var clock: UInt64 = 0
        var openedBound: Int?
        var slotBound: Int?
    }

    private let state = Mutex(State())
    private let opening = Mutex<Void>(())
    private let slotCapacity: Int
    private static let spareBuffers = 2
    private static let queue = DispatchQueue(label: "vault.pack-chunks.ahead", attributes: .concurrent)

    public init(capacity: Int = PackChunks.capacity) { slotCapacity = max(4, capacity) }

    /// Fills `buffer` from `offset` of `entry`'s content; fewer bytes only
    /// at its end. When the read enters the pack's next chunk, `readAhead`
    /// chunks after it are opened meanwhile (0: none). `open` opens the
    /// pack when it is not opened yet (its final chunk authenticated, its
    /// header checked against the entry). A chunk that does not
    /// authenticate, a compressed pack or a pack whose content is shorter
    /// than its entry says is `itemCorrupted`.
    public func read(_ entry: ManifestEntry, at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer,
                     readAhead: UInt64, open: () throws -> ItemReader) throws -> Int {
        let item = ByteKey(entry.itemID)
        let opened = try self.opened(item, entry: entry, open: open)
        guard offset < entry.size, !buffer.isEmpty else { return 0 }
        let want = Int(min(UInt64(buffer.count), entry.size - offset))
        let size = UInt64(ItemCipher.chunkSize)
        var done = 0
        do {
            while done < want {
                let at = offset + UInt64(done)
                let index = at / size
                let slot = try chunk(item, opened, index, readAhead: readAhead)
                let count = try slot.wait()
                let start = Int(at - index * size)
                guard start < count else { throw VaultError.corruptedOrTampered }   // shorter than the entry says
                let n = min(want - done, count - start)
                buffer.baseAddress!.advanced(by: done).copyMemory(from: slot.buffer.raw.baseAddress! + start, byteCount: n)
                done += n
            }
        } catch VaultError.corruptedOrTampered {
            throw VaultError.itemCorrupted(name: entry.name)
        }
        return done
    }

    private func opened(_ item: ByteKey, entry: ManifestEntry, open: () throws -> ItemReader) throws -> Opened {
        func kept() -> Opened? {
            state.withLock { s in
                s.clock += 1
                s.opened[item]?.used = s.clock
                return s.opened[item]
            }
        }
        if let o = kept() { return o }
        // One opening at a time: two threads that want the same pack would
        // each authenticate its final chunk (from a thin vault's remote, a
        // megabyte fetched twice: 2.29x a folder's bytes instead of 1.94x).
        return try opening.withLock { _ in try kept() ?? openPack(item, entry: entry, open: open) }
    }

    private func openPack(_ item: ByteKey, entry: ManifestEntry, open: () throws -> ItemReader) throws -> Opened {
        let reader = try open()
        // FORMAT.md: packs and repacks carry no item flags; their pieces are compressed one by one.
        guard !reader.header.flags.isCompressed, reader.contentLength == entry.size else {
            throw VaultError.itemCorrupted(name: entry.name)
        }
        let o = Opened(reader)
        let capacity = readerCapacity
        return state.withLock { s in
            if s.opened.count >= capacity, let oldest = s.opened.min(by: { $0.value.used < $1.value.used })?.key {
                s.opened[oldest] = nil   // its chunks stay until they are the least recently used
            }
            s.clock += 1
            o.used = s.clock
            s.opened[item] = o
            return o
        }
    }

    /// Chunk `index` of the pack, open or being opened (here, if nobody
    /// opens it yet); `readAhead` chunks after it are opened ahead when
    /// the pack's reads just entered it from the chunk before.
    private func chunk(_ item: ByteKey, _ opened: Opened, _ index: UInt64, readAhead: UInt64) throws -> SharedChunks.Slot {
        let ahead = state.withLock { _ -> ClosedRange<UInt64>? in
            defer { opened.last = index }
            guard readAhead > 0, let last = opened.last, index == last + 1,
                  index + 1 < opened.reader.chunkCount else { return nil }
            return (index + 1)...min(index + readAhead, opened.reader.chunkCount - 1)
        }
        let (slot, mine) = try take(Key(item: item, index: index))
        if mine { slot.open(opened.reader) }
        for k in ahead.map(Array.init) ?? [] {
            // Ahead only: the read that needs the chunk takes it again and meets any error.
            guard let (s, m) = try? take(Key(item: item, index: k)), m else { continue }
            let reader = opened.reader
            Self.queue.async { s.open(reader) }
        }
        return slot
    }

    /// The slot of a chunk, and whether the caller must open it (a new one).
    private func take(_ key: Key) throws -> (SharedChunks.Slot, Bool) {
        var buffer: PageBuffer?
        while true {
            let taken = state.withLock { s -> (SharedChunks.Slot, Bool)? in
                s.clock += 1
                if let kept = s.slots[key] {
                    s.slots[key]!.used = s.clock
                    if let buffer, s.spare.count < Self.spareBuffers { s.spare.append(buffer) }
                    return (kept.slot, false)
                }
                guard let b = buffer ?? s.spare.popLast() else { return nil }
                let slot = SharedChunks.Slot(index: key.index, buffer: b)
                s.slots[key] = (slot, s.clock)
                if s.slots.count > min(slotCapacity, s.slotBound ?? slotCapacity), let oldest = s.slots.min(by: { $0.value.used < $1.value.used })?.key,
                   var dropped = s.slots.removeValue(forKey: oldest)?.slot {
                    // Nobody else holds it and its opening ended: its buffer is free for the next chunk.
                    if isKnownUniquelyReferenced(&dropped), dropped.isOpen, s.spare.count < Self.spareBuffers {
                        s.spare.append(dropped.buffer)
                    }
                }
                return (slot, true)
            }
            if let taken { return taken }
            // Mapped outside the lock (and only when no spare one is free).
            buffer = try PageBuffer(count: ItemCipher.sealedChunkSize)
        }
    }
}

import Foundation
import System
import VaultCodecs
import VaultCore

/// Fills pack items with pieces (docs/FORMAT.md, "Backups: packs"): a
/// pack's content is its pieces' stored bytes back to back, nothing else
/// (where each is lives in the references to it): one zstd frame for a
/// piece that compresses, the piece itself for one the probe or the result
/// says does not (ZstdPieceEncoder). Sealed as an ordinary item of kind
/// pack and dropped into the inbox with its own envelope. A pack lands
/// when it reaches `targetSize`, and at the end of the backup; only then
/// does the cache learn its pieces. A dry run counts what it would store.
final class PackWriter {
    /// 32 MiB: tens of MiB, so a million files are not a million objects,
    /// and small enough that a killed backup loses little.
    static let targetSize: UInt64 = 32 << 20

    private let vault: Vault
    private let cache: BackupCache?
    private let dryRun: Bool
    private var current: StreamedDropIn?
    private let encoder: ZstdPieceEncoder
    /// Every pack is sealed in the same memory, one after another: two
    /// batches of 4 MiB, where a new writer's were 2 × 16 MiB of new pages
    /// for every pack (a page fault per 4 KiB sealed, issue 45).
    private let memory: ItemWriterMemory
    private var currentPieces: [BackupCache.Record] = []
    /// Pieces stored by this run, not yet in the cache (the current pack's,
    /// or all of them when there is no cache).
    private var fresh: [PieceID: PieceRef] = [:]
    private var dryOffset: UInt64 = 0
    /// Counted on the landing thread: read once `land` returned.
    private(set) var packsLanded = 0
    private(set) var sealedBytes: UInt64 = 0
    private(set) var piecesNew = 0
    private(set) var bytesNew: UInt64 = 0
    /// What the new pieces take in packs (after compression).
    private(set) var storedNew: UInt64 = 0

    /// Called with a pack's blob name once it has landed, before the cache
    /// learns it (`backup --to` sends it on from there).
    private let landed: ((String) throws -> Void)?
    /// Lands full packs on its own thread (shared by a cache's two writers),
    /// and holds the lock `known` takes: `known` is asked from other
    /// threads (PiecePipeline's workers) without the lock this writer is
    /// used under.
    private let lander: PackLander

    init(vault: Vault, cache: BackupCache?, dryRun: Bool, landed: ((String) throws -> Void)?,
         lander: PackLander = PackLander()) throws {
        (self.vault, self.cache, self.dryRun, self.landed, self.lander) = (vault, cache, dryRun, landed, lander)
        encoder = try ZstdPieceEncoder()
        memory = try ItemWriterMemory(batchChunks: 4)
    }

    /// A piece stored earlier (by this host, or by this run). Any thread.
    func known(_ id: PieceID) -> PieceRef? { lander.index.withLock { fresh[id] ?? cache?.reference(id) } }

    /// Whether `cache` has every one of `refs`, exactly there (its pieces
    /// change as packs land on the landing thread: under the same lock).
    func knowsAll(_ refs: [PieceRef], in cache: BackupCache) -> Bool {
        lander.index.withLock { refs.allSatisfy(cache.knows) }
    }

    /// Stores a piece unless it is known; its reference either way.
    func store(_ piece: UnsafeRawBufferPointer, id: PieceID) throws -> (ref: PieceRef, new: Bool) {
        if let ref = known(id) { return (ref, false) }
        return try add(piece, id: id, frame: try encoder.encode(piece))
    }

    /// The same with the piece's zstd frame made beforehand (PiecePipeline,
    /// on another thread): nil stores the piece as it is.
    func store(_ piece: UnsafeRawBufferPointer, id: PieceID, frame: UnsafeRawBufferPointer?) throws -> (ref: PieceRef, new: Bool) {
        if let ref = known(id) { return (ref, false) }
        return try add(piece, id: id, frame: frame)
    }

    private func add(_ piece: UnsafeRawBufferPointer, id: PieceID, frame: UnsafeRawBufferPointer?) throws -> (ref: PieceRef, new: Bool) {
        let count = UInt32(piece.count)
        let stored = frame ?? piece
        let ref: PieceRef
        if dryRun {
            ref = PieceRef(pack: [UInt8](repeating: 0, count: 16), offset: dryOffset, count: count, stored: UInt32(stored.count), id: id)
            dryOffset += UInt64(stored.count)
        } else {
            let pack = try current ?? StreamedDropIn(into: vault, kind: .pack, name: BackupItems.packName, memory: memory)
            current = pack
            ref = PieceRef(pack: pack.itemID, offset: pack.length, count: count, stored: UInt32(stored.count), id: id)
            try pack.write(stored)
            currentPieces.append(BackupCache.Record(id: id, offset: ref.offset, count: count, stored: ref.stored))
        }
        lander.index.withLock { fresh[id] = ref }
        piecesNew += 1
        bytesNew += UInt64(count)
        storedNew += UInt64(stored.count)
        if let pack = current, pack.length >= Self.targetSize { try handOff() }
        return (ref, true)
    }

    /// Lands the pack being filled, if any, and waits for every pack handed
    /// off before it: all have landed when this returns.
    func land() throws {
        try handOff()
        try lander.wait()
    }

    /// Seals the pack being filled and hands it to the lander: the next
    /// piece starts a new pack at once, in the same sealing memory.
    private func handOff() throws {
        guard let pack = current else { return }
        current = nil
        try pack.finish()
        let pieces = currentPieces
        currentPieces = []
        try lander.land(PackLander.Landing { [self] in try commit(pack, pieces) })
    }

    /// On the landing thread: content, envelope, `landed`, then the cache.
    /// Until the cache learns them, the pack's pieces are known as `fresh`.
    private func commit(_ pack: StreamedDropIn, _ pieces: [BackupCache.Record]) throws {
        try pack.land(modified: Syscall.now())
        try landed?(Hex.encode(pack.itemID))
        packsLanded += 1
        sealedBytes += pack.sealedLength
        guard let cache else { return }
        lander.index.withLock {
            cache.remember(pack: pack.itemID, pieces: pieces)
            for p in pieces { fresh[p.id] = nil }
        }
        try cache.log(pack: pack.itemID, pieces: pieces)
    }
}

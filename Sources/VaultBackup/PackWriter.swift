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
    private(set) var packsLanded = 0
    private(set) var sealedBytes: UInt64 = 0
    private(set) var piecesNew = 0
    private(set) var bytesNew: UInt64 = 0
    /// What the new pieces take in packs (after compression).
    private(set) var storedNew: UInt64 = 0

    /// Called with a pack's blob name once it has landed, before the cache
    /// learns it (`backup --to` sends it on from there).
    private let landed: ((String) throws -> Void)?
    /// Held for `fresh` and for the cache's pieces (shared by the writers
    /// of one cache): `known` is asked from other threads (PiecePipeline's
    /// workers) without the lock the writer is used under, which is held
    /// while a pack lands, fsyncs and all: the workers waited there (issue 45).
    private let index: NSLock

    init(vault: Vault, cache: BackupCache?, dryRun: Bool, landed: ((String) throws -> Void)?, index: NSLock = NSLock()) throws {
        (self.vault, self.cache, self.dryRun, self.landed, self.index) = (vault, cache, dryRun, landed, index)
        encoder = try ZstdPieceEncoder()
        memory = try ItemWriterMemory(batchChunks: 4)
    }

    /// A piece stored earlier (by this host, or by this run). Any thread.
    func known(_ id: PieceID) -> PieceRef? { index.withLock { fresh[id] ?? cache?.reference(id) } }

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
        index.withLock { fresh[id] = ref }
        piecesNew += 1
        bytesNew += UInt64(count)
        storedNew += UInt64(stored.count)
        if let pack = current, pack.length >= Self.targetSize { try land() }
        return (ref, true)
    }

    /// Lands the pack being filled, if any: content, envelope, then the cache.
    func land() throws {
        guard let pack = current else { return }
        current = nil
        try pack.land(modified: Syscall.now())
        try landed?(Hex.encode(pack.itemID))
        packsLanded += 1
        sealedBytes += pack.sealedLength
        if let cache {
            index.withLock {
                cache.remember(pack: pack.itemID, pieces: currentPieces)
                for p in currentPieces { fresh[p.id] = nil }
            }
            try cache.log(pack: pack.itemID, pieces: currentPieces)
        }
        currentPieces = []
    }
}

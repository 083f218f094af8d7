import System
import VaultCodecs
import VaultCore
import VaultCrypto

/// A snapshot opened for reading (docs/FORMAT.md, "Backups"). Everything in
/// it was chosen by whoever dropped it, who holds every key of it: each
/// piece is read only from a pack the snapshot lists and the vault holds,
/// only as long as the reference says (bounded), and released only once it
/// matches its id under the snapshot's piece key; trees are decoded to
/// their exact shape; walks are bounded in depth and in the number of
/// entries the snapshot says it has, so a tree reused a million times
/// cannot make a walk run for ever.
public final class SnapshotReader: @unchecked Sendable {
    // @unchecked: one thread at a time uses a reader (its piece buffer,
    // decoder and tables); another thread takes a `copy()`.
    public let vault: UnlockedVault
    public let entry: ManifestEntry
    public let snapshot: Snapshot
    /// The snapshot's id: the hex after "snapshot-" in its name.
    public let id: String
    private let listed: Set<[UInt8]>
    /// The tables of the repacks read so far, by item id.
    private var tables: [[UInt8]: RepackTable] = [:]
    /// The pack this reader read last, and where that read ended.
    private var lastRead: (item: [UInt8], end: UInt64)?
    /// A compressed piece's stored bytes, and the decoder, kept between reads.
    private var frame: [UInt8] = []
    private var decoder: ZstdPieceDecoder?
    public static let maxDepth = 1024
    /// Entries a walk may visit at most, whatever the snapshot claims.
    public static let maxEntries: UInt64 = 100_000_000

    public convenience init(_ vault: UnlockedVault, _ entry: ManifestEntry) throws {
        var content = try vault.snapshotContent(entry)
        defer { SecureZero.zero(&content) }
        try self.init(vault, entry, content: content)
    }

    /// A snapshot from its content, read already (one waiting in the inbox,
    /// which absorb checks before it is in the manifest).
    public init(_ vault: UnlockedVault, _ entry: ManifestEntry, content: [UInt8]) throws {
        self.vault = vault
        self.entry = entry
        id = String(entry.name.dropFirst(BackupItems.snapshotPrefix.count))
        guard let s = Snapshot.decode(content) else {
            throw BackupError.snapshotCorrupted(snapshot: id, damage: .recordDoesNotParse)
        }
        snapshot = s
        listed = Set(s.packs)
    }

    private init(copying other: SnapshotReader) {
        (vault, entry, snapshot, id, listed) = (other.vault, other.entry, other.snapshot, other.id, other.listed)
    }

    /// A reader of the same snapshot with state of its own, for another
    /// thread (a reader is used by one thread at a time; the pack chunks
    /// they read through are the vault's, shared).
    public func copy() -> SnapshotReader { SnapshotReader(copying: self) }

    /// The vault's snapshots, oldest first, each opened; one that does not
    /// open is reported through `damaged` and left out.
    public static func all(_ vault: UnlockedVault, damaged: (String, Error) -> Void = { _, _ in }) -> [SnapshotReader] {
        vault.snapshotEntries.compactMap { e -> SnapshotReader? in
            do { return try SnapshotReader(vault, e) } catch {
                damaged(String(e.name.dropFirst(BackupItems.snapshotPrefix.count)), error)
                return nil
            }
        }.sorted { ($0.snapshot.end.seconds, $0.snapshot.end.nanoseconds, $0.id) < ($1.snapshot.end.seconds, $1.snapshot.end.nanoseconds, $1.id) }
    }

    /// The snapshot whose id is `text` or starts with it: any prefix one
    /// snapshot alone has, however short (as git takes a commit's; issue 43:
    /// "1c1" said "no snapshot" though it was unique).
    public static func find(_ vault: UnlockedVault, _ text: String) throws -> SnapshotReader {
        let wanted = text.lowercased()
        let matches = vault.snapshotEntries.filter {
            !wanted.isEmpty && $0.name.dropFirst(BackupItems.snapshotPrefix.count).hasPrefix(wanted)
        }
        guard let first = matches.first else { throw BackupError.noSuchSnapshot(text) }
        guard matches.count == 1 else { throw BackupError.ambiguousSnapshot(text) }
        return try SnapshotReader(vault, first)
    }

    private func corrupted(_ damage: SnapshotDamage) -> BackupError { .snapshotCorrupted(snapshot: id, damage: damage) }

    /// A piece's bytes into `out` (which it replaces), verified against its
    /// id. A compressed piece's frame must make exactly its length.
    public func read(_ ref: PieceRef, into out: inout [UInt8], limit: Int = Tree.maxLength) throws {
        guard Int(ref.count) <= limit, listed.contains(ref.pack) else { throw corrupted(.referenceOutsidePacks) }
        let (pack, offset) = try locate(ref)
        try read(ref, at: offset, of: pack, in: vault, into: &out)
    }

    /// `ref`'s piece read from `pack`, an item under the reference's pack
    /// id as `other` holds it (another copy of the vault's, staged by a
    /// merge that found that id claimed by two items: ClaimedPack), and
    /// verified against its id as any piece.
    public func read(_ ref: PieceRef, fromPack pack: ManifestEntry, in other: UnlockedVault, into out: inout [UInt8]) throws {
        guard pack.kind == .pack, pack.itemID == ref.pack, Int(ref.count) <= Chunker.maxSize, listed.contains(ref.pack) else {
            throw corrupted(.referenceOutsidePacks)
        }
        try read(ref, at: ref.offset, of: pack, in: other, into: &out)
    }

    private func read(_ ref: PieceRef, at offset: UInt64, of pack: ManifestEntry, in vault: UnlockedVault, into out: inout [UInt8]) throws {
        func read(_ e: ManifestEntry, at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            vault === self.vault ? try self.read(e, at: offset, into: buffer)
                : try vault.packChunks.read(e, at: offset, into: buffer, readAhead: 0) { try vault.reader(for: e) }
        }
        let tampered = corrupted(.pieceCorrupted(pack: BackupItems.packName(ref.pack)))
        out = [UInt8](repeating: 0, count: Int(ref.count))
        if ref.isCompressed {
            if frame.count < Int(ref.stored) { frame = [UInt8](repeating: 0, count: Int(ref.stored)) }
            let n = try frame.withUnsafeMutableBytes { try read(pack, at: offset, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<Int(ref.stored)])) }
            guard n == Int(ref.stored) else { throw tampered }
            let decoder = try self.decoder ?? ZstdPieceDecoder()
            self.decoder = decoder
            do {
                try frame.withUnsafeBytes { f in
                    try out.withUnsafeMutableBytes { try decoder.decode(UnsafeRawBufferPointer(rebasing: f[..<n]), into: $0) }
                }
            } catch is ZstdError { throw tampered }
        } else {
            let n = try out.withUnsafeMutableBytes { try read(pack, at: offset, into: $0) }
            guard n == out.count else { throw tampered }
        }
        guard try out.withUnsafeBytes({ try snapshot.key.verify($0, is: ref.id) }) else { throw tampered }
    }

    /// Whether `ref` names a pack the snapshot lists and the vault holds
    /// its bytes: the pack, or a repack whose table kept them (read, not
    /// the piece itself).
    public func isPlaced(_ ref: PieceRef) -> Bool {
        listed.contains(ref.pack) && (try? locate(ref)) != nil
    }

    /// The pack or repack that holds `ref`'s stored bytes, and where in
    /// its content: the pack itself, or a repack whose table kept them.
    private func locate(_ ref: PieceRef) throws -> (ManifestEntry, UInt64) {
        let sources = vault.packSources(ref.pack)
        guard !sources.isEmpty else { throw corrupted(.packNotInVault(pack: BackupItems.packName(ref.pack))) }
        for e in sources {
            guard e.kind == .repack else { return (e, ref.offset) }
            if let at = try table(e, pack: ref.pack).place(ref.offset, UInt64(ref.stored)) { return (e, at) }
        }
        throw corrupted(.pieceNotKeptInRepack(pack: BackupItems.packName(ref.pack)))
    }

    /// Bytes of a pack's or repack's content, through the vault's shared
    /// chunks; read ahead only while this reader reads one pack forward.
    private func read(_ e: ManifestEntry, at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let forward = lastRead.map { $0.item == e.itemID && $0.end == offset } ?? false
        let n = try vault.packChunks.read(e, at: offset, into: buffer, readAhead: forward ? vault.readAhead : 0) { try vault.reader(for: e) }
        lastRead = (e.itemID, offset + UInt64(n))
        return n
    }

    /// A repack's table, read once.
    private func table(_ e: ManifestEntry, pack: [UInt8]) throws -> RepackTable {
        if let t = tables[e.itemID] { return t }
        guard let t = try RepackTable.read(pack: pack, contentLength: e.size, { try read(e, at: $0, into: $1) }) else {
            throw corrupted(.storageCorrupted(name: e.name))
        }
        tables[e.itemID] = t
        return t
    }

    public func tree(_ ref: PieceRef) throws -> [TreeEntry] {
        var bytes: [UInt8] = []
        try read(ref, into: &bytes)
        guard let entries = Tree.decode(bytes) else { throw corrupted(.treeDoesNotParse) }
        return entries
    }

    /// Visits every entry depth first, in name order, with its path (names
    /// from the root); `visit` returns whether to go into a directory, and
    /// `leave` is called after its entries.
    public func walk(visit: ([[UInt8]], TreeEntry) throws -> Bool, leave: ([[UInt8]], TreeEntry) throws -> Void = { _, _ in }) throws {
        let c = snapshot.counts
        var budget = min(Self.maxEntries, c.files &+ c.directories &+ c.symlinks &+ 1)
        func walk(_ ref: PieceRef, _ path: [[UInt8]]) throws {
            guard path.count <= Self.maxDepth else { throw corrupted(.nestedTooDeep) }
            for e in try tree(ref) {
                guard budget > 0 else { throw corrupted(.moreEntriesThanCounted) }
                budget -= 1
                let p = path + [e.name]
                if try visit(p, e), e.kind == .directory, let sub = e.subtree {
                    try walk(sub, p)
                    try leave(p, e)
                }
            }
        }
        try walk(snapshot.root, [])
    }

    /// The entry at `path` (names from the root).
    public func entry(at path: [[UInt8]]) throws -> TreeEntry {
        var ref = snapshot.root
        var found: TreeEntry?
        for (i, name) in path.enumerated() {
            guard let e = try tree(ref).first(where: { $0.name == name }) else {
                throw BackupError.noSuchPath(path.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/"))
            }
            found = e
            if i < path.count - 1 {
                guard e.kind == .directory, let sub = e.subtree else {
                    throw BackupError.noSuchPath(path.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/"))
                }
                ref = sub
            }
        }
        guard let found else { throw BackupError.noSuchPath("/") }
        return found
    }

    /// A file's content, piece by piece, each verified before it goes to `sink`.
    public func write(_ e: TreeEntry, to sink: ByteSink) throws {
        var bytes: [UInt8] = []
        for ref in e.pieces {
            try read(ref, into: &bytes, limit: Chunker.maxSize)
            try bytes.withUnsafeBytes { try sink.write($0) }
        }
    }
}

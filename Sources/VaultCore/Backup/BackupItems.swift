import ByteLayout
import Synchronization
import System
import VaultCrypto

// What the vault itself knows of `vault backup`'s items (the formats are
// VaultBackup's; docs/FORMAT.md, "Backups"): a pack is named
// "pack-<pack id hex>" and a snapshot "snapshot-<snapshot id hex>", each id
// the item id it was dropped in under, so a name is unique and, kept
// through rekey (which gives items new ids), names the same content for
// ever. A snapshot's content opens with the packs it needs:
//
//   "VAULTSN2" || pack count u32be || pack id (16) × count || the rest (VaultBackup)
//
// (or "VAULTSN1", format 1, the same prefix: still read, no longer written)
// so that absorbing can refuse a snapshot whose packs are not all in the
// vault, without understanding trees.

extension ItemKind {
    /// A backup's pack, repack or snapshot: storage, not an item of the user's.
    public var isBackupStorage: Bool { self == .pack || self == .snapshot || self == .repack }
}

public enum BackupItems {
    public static let packPrefix = "pack-"
    public static let snapshotPrefix = "snapshot-"
    public static let repackPrefix = "repack-"
    public static let snapshotMagic = Array("VAULTSN2".utf8)
    public static let legacySnapshotMagic = Array("VAULTSN1".utf8)
    /// Packs one snapshot may name: 2^20 packs of 16 MiB or more is 16 TiB.
    public static let maxPacks = 1 << 20
    /// A snapshot item's content, at most (its pack list and root reference
    /// are a few MiB at worst).
    public static let maxSnapshotLength = 12 + 16 * maxPacks + (1 << 20)

    public static func packName(_ id: [UInt8]) -> String { packPrefix + Hex.encode(id) }
    public static func snapshotName(_ id: [UInt8]) -> String { snapshotPrefix + Hex.encode(id) }
    /// A repack keeps its pack's id: references name the pack, never the repack.
    public static func repackName(_ id: [UInt8]) -> String { repackPrefix + Hex.encode(id) }

    /// The pack ids a snapshot's content lists first (exact prefix, bounded).
    public static func packIDs(inSnapshot content: [UInt8]) throws -> [[UInt8]] {
        var r = ByteReader(content)
        do {
            try r.expect(content.starts(with: legacySnapshotMagic) ? legacySnapshotMagic : snapshotMagic)
            let count = Int(try r.u32())
            guard count <= maxPacks else { throw VaultError.corruptedOrTampered }
            return try (0..<count).map { _ in try r.bytes(16) }
        } catch { throw VaultError.corruptedOrTampered }
    }

    /// Whether `name` is one only a backup's storage may carry: "pack-",
    /// "snapshot-" or "repack-" and 32 lower-case hex digits. The manifest
    /// holds no file or folder under such a name (Manifest.add, rename),
    /// so no item of the user's is ever taken for a pack, a snapshot or a
    /// repack, nor one of those for an item.
    public static func isReservedName(_ name: String) -> Bool {
        for prefix in [packPrefix, snapshotPrefix, repackPrefix] where name.hasPrefix(prefix) {
            let hex = name.utf8.dropFirst(prefix.utf8.count)
            return hex.count == 32 && hex.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
        }
        return false
    }

    /// The pack id a pack or repack entry's name carries (nil for other kinds).
    package static func storageID(of e: ManifestEntry) -> [UInt8]? {
        let prefix: String
        switch e.kind {
        case .pack: prefix = packPrefix
        case .repack: prefix = repackPrefix
        default: return nil
        }
        return Hex.decode(String(e.name.dropFirst(prefix.count)))
    }

    /// Whether an entry's kind and name agree: backup storage under its
    /// reserved name, anything else under any other.
    static func nameFitsKind(_ e: ManifestEntry) -> Bool {
        switch e.kind {
        case .file, .folder: return !isReservedName(e.name)
        case .pack: return e.name.hasPrefix(packPrefix) && isReservedName(e.name)
        case .snapshot: return e.name.hasPrefix(snapshotPrefix) && isReservedName(e.name)
        case .repack: return e.name.hasPrefix(repackPrefix) && isReservedName(e.name)
        }
    }

    /// A dropped-in pack or snapshot must carry the name its item id gives
    /// it, and that name must be new: they are never versioned or replaced.
    static func checkDropped(_ e: ManifestEntry, in manifest: Manifest) -> Bool {
        switch e.kind {
        case .file, .folder: return true
        case .pack: return e.name == packName(e.itemID) && !manifest.contains(name: e.name)
        case .snapshot: return e.name == snapshotName(e.itemID) && !manifest.contains(name: e.name)
        case .repack: return false   // prune writes them, with the password; a dropper never
        }
    }
}

extension UnlockedVault {
    /// The backup packs in the vault, by pack id (hex).
    public func pack(_ id: [UInt8]) -> ManifestEntry? {
        guard let e = manifest.entry(named: BackupItems.packName(id)), e.kind == .pack else { return nil }
        return e
    }

    /// Where a pack's pieces can be: the pack itself, else its repacks
    /// (versions of "repack-<id>", newest first: two machines that each
    /// repacked it before a merge leave one each). Empty: not in the vault.
    public func packSources(_ id: [UInt8]) -> [ManifestEntry] {
        if let p = pack(id) { return [p] }
        return manifest.versions(named: BackupItems.repackName(id)).filter { $0.kind == .repack }.reversed()
    }

    /// The snapshots in the vault.
    public var snapshotEntries: [ManifestEntry] { manifest.entries.filter { $0.kind == .snapshot } }

    /// A snapshot item's whole content, authenticated, from `path` (its
    /// drop-in in the inbox, or its place in items/).
    func snapshotContent(_ entry: ManifestEntry, at path: String) throws -> [UInt8] {
        try snapshotContent(entry, source: FileHandleFD(readingFrom: path))
    }

    /// The same from any source of its sealed bytes (items/ or a thin vault's remote).
    func snapshotContent(_ entry: ManifestEntry, source: ByteSource) throws -> [UInt8] {
        let r = try ItemRules.open(entry, source: source, threads: 1)
        guard r.contentLength <= UInt64(BackupItems.maxSnapshotLength) else { throw VaultError.corruptedOrTampered }
        let sink = MemoryBytes()
        try r.readAll(to: sink, batchChunks: 1)
        guard UInt64(sink.bytes.count) == entry.size else { throw VaultError.corruptedOrTampered }
        return sink.bytes
    }

    /// A stored snapshot's content (`vault snapshots`).
    public func snapshotContent(_ entry: ManifestEntry) throws -> [UInt8] {
        guard entry.kind == .snapshot else { throw VaultError.wrongItemKind(name: entry.name, expected: .snapshot) }
        do { return try snapshotContent(entry, source: blobSource(entry.blobName)) } catch let e as SystemError where e.errno == .noSuchFile {
            throw VaultError.itemCorrupted(name: entry.name)
        } catch VaultError.corruptedOrTampered {
            throw VaultError.itemCorrupted(name: entry.name)
        }
    }

    /// The snapshots waiting in the inbox (refused, after an absorb) whose
    /// envelope and content open: each one's content (the caller zeroes
    /// it) and the packs it names that the vault holds neither as a pack
    /// nor as a repack. A host record tells that snapshot's host those
    /// are gone, so its next backup stores them again instead of naming
    /// them in one refused snapshot after another (HostRecords).
    public func refusedSnapshots() throws -> [(content: [UInt8], missing: [[UInt8]])] {
        var out: [(content: [UInt8], missing: [[UInt8]])] = []
        for d in try openInboxWhole(with: keys) where d.entry.kind == .snapshot {
            // One that does not read names nothing to tell: it stays refused.
            guard let content = try? snapshotContent(d.entry, at: waitingContentPath(d.entry)),
                  let ids = try? BackupItems.packIDs(inSnapshot: content) else { continue }
            let missing = ids.filter { packSources($0).isEmpty }
            if !missing.isEmpty { out.append((content, missing)) }
        }
        return out
    }

    /// Where a waiting drop-in's content is: still in the inbox, else in
    /// items/ (an absorb interrupted after the rename). Only "no such
    /// file" means not in the inbox; any other failure to look is thrown,
    /// never read as absent.
    private func waitingContentPath(_ entry: ManifestEntry) throws -> String {
        let inInbox = paths.dropInContent(entry.blobName)
        return try Syscall.status(of: inInbox) != nil ? inInbox : paths.item(entry.blobName)
    }

    /// Whether a waiting pack authenticates chunk by chunk, all of it: a
    /// snapshot is taken in only over whole packs, so damage is found at
    /// absorb, not at the restore that needed the piece. Any failure, to
    /// open, to read or to authenticate, is a no: the pack stays waiting in
    /// the inbox (rejected, nothing deleted) and its snapshots wait with it.
    func packIsWhole(_ entry: ManifestEntry) -> Bool {
        do {
            _ = try ItemRules.open(entry, at: waitingContentPath(entry), threads: 1).readAll(to: DiscardingSink())
            return true
        } catch {
            return false
        }
    }

    /// Why a waiting snapshot may not be absorbed (nil: it may): it cannot
    /// be read, it does not open, or a pack it lists is not in the manifest
    /// (missing, or refused because it was damaged). Absorb takes packs in
    /// before snapshots. A refused snapshot waits in the inbox.
    func snapshotRefusal(_ entry: ManifestEntry) -> SnapshotRefusal? {
        var content: [UInt8]
        let ids: [[UInt8]]
        do {
            content = try snapshotContent(entry, at: waitingContentPath(entry))
            ids = try BackupItems.packIDs(inSnapshot: content)
        } catch let error as SystemError {
            return .unreadable(error.errno)
        } catch {
            return .doesNotOpen
        }
        defer { SecureZero.zero(&content) }
        let absent = ids.filter { pack($0) == nil }
        guard !absent.isEmpty else { return nil }
        // A repack keeps only what the snapshots prune saw needed: one made
        // before it, never seen by that prune, may need a piece it dropped.
        // Taken in only if a walk of its trees proves it does not (a backup
        // told what the repack kept by its repack note names only that).
        if absent.allSatisfy({ !manifest.versions(named: BackupItems.repackName($0)).isEmpty }) {
            if let kept = SnapshotAdmission.repackedCheck, kept(self, entry, content, Set(absent)) { return nil }
            return .madeBeforeRepack(first: BackupItems.packName(absent[0]), count: absent.count)
        }
        return .packsMissing(first: absent.prefix(3).map(BackupItems.packName), count: absent.count)
    }
}

/// Why absorb left a backup snapshot waiting in the inbox
/// (`AbsorbReport.refusedSnapshots`); the CLI words it.
public enum SnapshotRefusal: Equatable, Sendable {
    /// Its content could not be read (the system's answer): not a verdict
    /// on the snapshot, which the next absorb tries again.
    case unreadable(Errno)
    /// It does not open: corrupted or tampered.
    case doesNotOpen
    /// Packs it needs (`count`, the first named) have been repacked since
    /// it was made: a repack keeps only what the snapshots prune saw needed.
    case madeBeforeRepack(first: String, count: Int)
    /// Packs it needs (`count`, the first three named) are missing or were
    /// refused as damaged.
    case packsMissing(first: [String], count: Int)
}

/// How absorb asks whether a waiting snapshot that names repacked packs
/// needs only what those repacks kept. The answer needs the snapshot's
/// trees, which this module cannot read: VaultBackup's RepackedSnapshots
/// registers it, and the `vault` command does so before it opens a vault.
/// Unregistered (this module's own tests), such a snapshot is refused, as
/// before repack notes.
public enum SnapshotAdmission {
    /// (vault, the waiting snapshot's entry, its content, the repacked pack
    /// ids it names): whether every reference into those packs was kept.
    public typealias RepackedCheck = @Sendable (UnlockedVault, ManifestEntry, [UInt8], Set<[UInt8]>) -> Bool

    private static let check = Mutex<RepackedCheck?>(nil)

    public static func register(_ repacked: @escaping RepackedCheck) { check.withLock { $0 = repacked } }

    static var repackedCheck: RepackedCheck? { check.withLock { $0 } }
}

import System
import VaultCore
import VaultCrypto

/// A host's backup cache made again from the vault, by its owner (issue
/// 43, item 14): after `vault move`, on a new machine, or when the cache
/// was lost, the next backup of that host would otherwise store every
/// piece again. Everything it writes the owner can read in the vault
/// already, and the host held before: its own piece key (sealed in each of
/// its snapshots) and where its pieces are (the references of those
/// snapshots). No other host's key or pieces: a cache never lets one host
/// name another's content.
public enum CacheRebuild {
    public struct Summary: Sendable {
        public var snapshots = 0, pieces = 0, packs = 0
    }

    /// Writes the cache of `host` for `vault` under `base` (the directory
    /// `BackupCache` uses): the key of that host's newest snapshot, and
    /// every piece of the snapshots made under that key. A cache there
    /// under another key is replaced (its pieces could never match).
    public static func run(_ vault: UnlockedVault, base: String, host: String) throws -> Summary {
        let mine = SnapshotReader.all(vault).filter { $0.snapshot.host == host }
        guard let newest = mine.last else { throw BackupError.noSuchSnapshot("of host '\(host)'") }
        let key = newest.snapshot.key
        // Keys are compared by what they name: the id of the empty piece.
        let fingerprint = try key.id(of: [])
        let directory = base + "/" + Hex.encode(vault.vault.header.vaultID)
        try Vault.ensureDirectory(directory)
        try Syscall.chmod(FilePath(directory), 0o700)
        let keyPath = directory + "/key"
        let held = try? VaultDirectory.readFile(keyPath, limit: PieceKey.length)   // none or damaged: written below
        var same = false
        if var bytes = held, bytes.count == PieceKey.length {
            same = try PieceKey(secret: SecretBytes(consuming: &bytes)).id(of: []) == fingerprint
        }
        if !same {
            try key.secret.withUnsafeBytes { try VaultDirectory.atomicWrite($0, to: keyPath, mode: 0o600) }
            // The old key's log and file lists name pieces this key never will.
            for name in try VaultDirectory.names(in: directory) where name == "pieces" || name.hasPrefix("files-") {
                try Syscall.unlink(directory + "/" + name)
            }
        }
        let cache = try BackupCache(directory: directory, present: { try vault.vault.presence(ofPack: $0) })
        var summary = Summary()
        var byPack: [[UInt8]: [BackupCache.Record]] = [:]
        var seen = Set<PieceID>()
        func note(_ ref: PieceRef) {
            guard seen.insert(ref.id).inserted else { return }
            byPack[ref.pack, default: []].append(BackupCache.Record(id: ref.id, offset: ref.offset, count: ref.count, stored: ref.stored))
        }
        for reader in mine where try reader.snapshot.key.id(of: []) == fingerprint {
            summary.snapshots += 1
            note(reader.snapshot.root)
            try reader.walk(visit: { _, e in
                e.pieces.forEach(note)
                e.subtree.map(note)
                return true
            })
        }
        for (pack, records) in byPack.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) where try vault.vault.presence(ofPack: pack) == .present {
            try cache.record(pack: pack, pieces: records)
            summary.packs += 1
            summary.pieces += records.count
        }
        return summary
    }
}

import ByteLayout
import System
import VaultCodecs
import VaultCrypto

// A folder index file (docs/FORMAT.md, "Folder indexes"): where each file
// of one folder item lies in its archive, kept so the next `vault mount`
// (or `get ITEM/FILE`) lists the folder without reading the whole archive
// again. Finding it costs a pass that decrypts every chunk (issue 45: a
// third of a mount's `cp -r` of a 115 MiB folder; minutes for a large one
// on a thin vault). One per folder item version, at `indexes/<name hex>`:
//
//   "VAULTFX1" (8) || nonce (12) || AES-256-GCM(key, nonce, aad, plaintext)
//   aad       = "VAULTFX1" || vault id (16) || name (16)
//   plaintext = count u32be || entry × count || zeros to Padmé(length before them)
//   entry     = kind u8 || permissions u16be || mtime i64be || size u64be
//               || data offset u64be || path u16be-prefixed || link target u16be-prefixed
//   key  = HKDF-SHA256(ikm = VMK, salt = vault id, info = "vault v1 folder index key", 32)
//   name = HMAC-SHA256(HKDF-SHA256(ikm = VMK, salt = vault id, info = "vault v1 folder index name", 32),
//                      item id || file key), first 16 bytes
//
// The file key is in the name (as data, never as a key) so an index is
// bound to one write of one item: a new version, or the same id written
// again by another replica, has another name. Padmé hides the exact count
// of entries as it hides an item's exact size. A file that does not open
// or check is ignored (the pass runs, and writes it anew): like every
// cache here, it is a hint, never the only copy of anything.
/// The two keys of folder index files, derived once per unlock (VaultKeys):
/// a mount's tidy names every folder item of the manifest, and each index
/// read or written is named, sealed or opened, none deriving them again.
struct FolderIndexKeys: Sendable {
    /// AES-256-GCM key of the files. An AEAD is made from it for each use:
    /// one is not shared between the mount's threads.
    let sealing: SecretBytes
    /// Names the files: HMAC-SHA256(this, item id || file key).
    let naming: HMACSHA256Key

    init(master: MasterKey, vaultID: [UInt8]) throws {
        sealing = try master.derive(KeyLabel.folderIndexKey, vaultID: vaultID)
        naming = try HMACSHA256Key(try master.derive(KeyLabel.folderIndexName, vaultID: vaultID))
    }
}

public struct FolderIndexFile {
    static let magic = Array("VAULTFX1".utf8)
    /// An index file is at most this long; a larger index is not kept.
    public static let maxLength = 256 << 20
    static let fixedEntryLength = 1 + 2 + 8 + 8 + 8 + 2 + 2
    static let overhead = magic.count + AEADAlgorithm.nonceLength + AEADAlgorithm.tagLength

    /// The file's name under `indexes/` for one item: 32 hex digits.
    static func name(item entry: ManifestEntry, keys: FolderIndexKeys) throws -> String {
        var data = entry.itemID
        entry.fileKey.withUnsafeBytes { data += $0 }
        defer { SecureZero.zero(&data) }
        return Hex.encode(Array(try data.withUnsafeBytes { try keys.naming.authenticate($0) }.prefix(16)))
    }

    static func aad(_ vaultID: [UInt8], _ name: String) -> [UInt8] { magic + vaultID + (Hex.decode(name) ?? []) }

    static func aead(_ keys: FolderIndexKeys) throws -> AEAD { try AEAD(.aes256GCM, key: keys.sealing) }

    /// The plaintext: entries in the index's order (the archive's), paths
    /// without their leading "/", padded. Nil if it would not fit `maxLength`.
    static func encode(_ index: FolderIndex) -> [UInt8]? {
        var w = ByteWriter()
        w.u32(UInt32(index.entries.count))
        for e in index.entries {
            w.u8(e.kind == .file ? 0 : e.kind == .directory ? 1 : 2)
            w.u16(UInt16(e.permissions & 0o777))
            w.i64(e.mtime)
            w.u64(e.size)
            w.u64(e.dataOffset)
            // Paths are under PATH_MAX (ExtractionPlan); link targets are what libarchive read.
            guard (try? w.lengthPrefixed(UInt16.self, Array(e.path.dropFirst()))) != nil,
                  (try? w.lengthPrefixed(UInt16.self, e.linkTarget)) != nil,
                  w.bytes.count <= maxLength - overhead else { return nil }
        }
        let padded = Int(Padme.paddedLength(UInt64(w.bytes.count)))
        guard padded <= maxLength - overhead else { return nil }
        w.bytes(repeatElement(0, count: padded - w.bytes.count))
        return w.bytes
    }

    /// The sealed file for `index`, to be named `name` (its item's),
    /// nil if it would be over `maxLength`.
    static func seal(_ index: FolderIndex, name: String, keys: FolderIndexKeys, vaultID: [UInt8],
                     nonce: [UInt8] = SecureRandom.bytes(AEADAlgorithm.nonceLength)) throws -> [UInt8]? {
        try seal(index, magic: magic, aead: aead(keys), aad: aad(vaultID, name), nonce: nonce)
    }

    /// `magic || nonce || AES-256-GCM(aead's key, nonce, aad, encode(index))`:
    /// a kept index, or a dropper's (DroppedFolderIndex), which differ only
    /// in magic, key and aad. Nil if it would be over `maxLength`.
    static func seal(_ index: FolderIndex, magic: [UInt8], aead: AEAD, aad: [UInt8], nonce: [UInt8]) throws -> [UInt8]? {
        guard var plain = encode(index) else { return nil }
        defer { SecureZero.zero(&plain) }
        return magic + nonce + (try aead.seal(nonce: nonce, aad: aad, plaintext: plain))
    }

    /// Opens a file read from `indexes/<name>` (`name` its item's): exact
    /// shape, every entry admitted again as extraction admits an archive's
    /// (`FolderIndex.rebuild`), and as many files as `item` counts.
    /// Anything else is `corruptedOrTampered`.
    static func open(_ bytes: [UInt8], item: ManifestEntry, name: String, keys: FolderIndexKeys,
                     vaultID: [UInt8]) throws -> FolderIndex {
        try open(bytes, magic: magic, aead: aead(keys), aad: aad(vaultID, name), item: item)
    }

    /// Opens what `seal(_:magic:aead:aad:nonce:)` made, by the rules above.
    static func open(_ bytes: [UInt8], magic: [UInt8], aead: AEAD, aad: [UInt8], item: ManifestEntry) throws -> FolderIndex {
        let head = magic.count + AEADAlgorithm.nonceLength
        guard bytes.count <= maxLength, bytes.count >= overhead + 4,
              Array(bytes.prefix(magic.count)) == magic else { throw VaultError.corruptedOrTampered }
        var plain: [UInt8]
        do {
            plain = try aead.open(nonce: Array(bytes[magic.count..<head]), aad: aad, sealed: Array(bytes[head...]))
        } catch CryptoError.authenticationFailed {
            throw VaultError.corruptedOrTampered
        }
        defer { SecureZero.zero(&plain) }
        return try decode(plain, item: item)
    }

    /// The index in `plain` (see the top of this file), admitted again
    /// entry by entry, with as many files as `item` counts.
    static func decode(_ plain: [UInt8], item: ManifestEntry) throws -> FolderIndex {
        var entries: [FolderIndex.Entry] = []
        do {
            var r = ByteReader(plain)
            let count = Int(try r.u32())
            guard count <= r.remaining / fixedEntryLength else { throw VaultError.corruptedOrTampered }
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let kind: FolderIndex.Entry.Kind
                switch try r.u8() {
                case 0: kind = .file
                case 1: kind = .directory
                case 2: kind = .symlink
                default: throw VaultError.corruptedOrTampered
                }
                let permissions = UInt32(try r.u16())
                let mtime = try r.i64(), size = try r.u64(), offset = try r.u64()
                let path = try r.lengthPrefixed(UInt16.self)
                let target = try r.lengthPrefixed(UInt16.self)
                entries.append(.init(path: [UInt8(ascii: "/")] + path, kind: kind, size: size, permissions: permissions,
                                     mtime: mtime, dataOffset: offset, linkTarget: target))
            }
            // The padding: exactly to Padmé's length, every byte zero.
            let unpadded = r.offset
            let padding = r.rest()
            guard UInt64(plain.count) == Padme.paddedLength(UInt64(unpadded)), padding.allSatisfy({ $0 == 0 }) else {
                throw VaultError.corruptedOrTampered
            }
        } catch is ByteLayoutError {
            throw VaultError.corruptedOrTampered
        }
        let index: FolderIndex
        do { index = try FolderIndex.rebuild(entries) } catch { throw VaultError.corruptedOrTampered }
        guard UInt64(index.entries.lazy.filter({ $0.kind == .file }).count) == item.fileCount else { throw VaultError.corruptedOrTampered }
        return index
    }
}

extension UnlockedVault {
    /// Index files older than this that no folder item of the manifest
    /// names are removed by `tidyFolderIndexes`: a newer mount, whose
    /// manifest holds an item ours does not yet, may have just written one.
    public static let folderIndexGrace: Int64 = 3600

    func indexName(of entry: ManifestEntry) throws -> String { try FolderIndexFile.name(item: entry, keys: keys.folderIndex) }

    // Every `try?` below drops the error of a cache: an index that cannot
    // be named, read, opened, written or removed costs a pass over the
    // archive (or a file left for the next tidy), never an item's bytes.

    /// The kept index of `entry`, nil if there is none or it does not open
    /// or check (the pass then runs and writes it anew).
    func keptIndex(of entry: ManifestEntry) -> FolderIndex? {
        guard let name = try? indexName(of: entry),   // a cache: see above
              let bytes = try? VaultDirectory.readFile(paths.indexes + "/" + name, limit: FolderIndexFile.maxLength) else {
            return nil   // none, or unreadable
        }
        // Refused: as if there were none.
        return try? FolderIndexFile.open(bytes, item: entry, name: name, keys: keys.folderIndex, vaultID: vaultID)
    }

    /// Keeps `index` for the next mount, atomically. Never from a
    /// read-only open. Not `durable`: renamed into place unsynced (absorb
    /// keeping many at once); a crash may then leave a file that does not
    /// open, which is refused like any other and made anew.
    func keep(_ index: FolderIndex, of entry: ManifestEntry, durable: Bool = true) {
        guard !readOnly, let name = try? indexName(of: entry),   // a cache: see above
              let sealed = try? FolderIndexFile.seal(index, name: name, keys: keys.folderIndex, vaultID: vaultID) else { return }   // too large to keep
        try? Vault.ensureDirectory(paths.indexes)   // the write below fails too, and is dropped
        // Not kept: the next mount makes the pass.
        try? VaultDirectory.atomicWrite(sealed, to: paths.indexes + "/" + name, mode: 0o600, durable: durable)
    }

    /// The `indexes/` name of every folder item version of `manifest`
    /// (this vault's by default; a remote's staged one shares its keys).
    public func folderIndexNames(of manifest: Manifest? = nil) -> [String: ManifestEntry] {
        var names: [String: ManifestEntry] = [:]
        for e in (manifest ?? self.manifest).entries where e.kind == .folder {
            // An item whose name cannot be made has no file: see above.
            if let n = try? indexName(of: e) { names[n] = e }
        }
        return names
    }

    /// Keeps an index file fetched from a remote, whose bytes are hostile
    /// like everything there: only one that opens under its name and checks
    /// as `entry`'s (the reader's rules), as it came, atomically and
    /// unsynced (a cache, as at absorb). Returns whether it was kept.
    @discardableResult
    public func keepFetchedIndex(_ bytes: [UInt8], name: String, of entry: ManifestEntry) -> Bool {
        guard !readOnly, (try? indexName(of: entry)) == name,   // a cache: see above
              (try? FolderIndexFile.open(bytes, item: entry, name: name, keys: keys.folderIndex, vaultID: vaultID)) != nil else {
            return false   // refused: the first mount makes the pass
        }
        try? Vault.ensureDirectory(paths.indexes)   // the write below fails too, and is dropped
        return (try? VaultDirectory.atomicWrite(bytes, to: paths.indexes + "/" + name, mode: 0o600, durable: false)) != nil   // not kept: a pass
    }

    /// Removes the index file of each of `entries` that has one (an item
    /// removed, or a version dropped), so no copy of its paths outlives it.
    /// Returns the names of the files it removed.
    @discardableResult
    package func forgetIndexes(of entries: [ManifestEntry]) -> [String] {
        var removed: [String] = []
        for e in entries where e.kind == .folder {
            guard let name = try? indexName(of: e) else { continue }   // a cache: see above
            if (try? Syscall.unlink(paths.indexes + "/" + name)) != nil { removed.append(name) }   // none, or left for `tidyFolderIndexes`
        }
        if !removed.isEmpty { try? Syscall.fsyncDirectory(paths.indexes) }   // a removal undone by a crash: the next tidy's
        return removed
    }

    /// Removes the files in `indexes/` that name no folder item of the
    /// manifest (removed items, dropped versions, names from before a
    /// rekey, unfinished writes) once older than `folderIndexGrace`.
    /// Returns how many it removed. Nothing from a read-only open.
    @discardableResult
    public func tidyFolderIndexes(now: Int64) -> Int {
        guard !readOnly, let names = try? VaultDirectory.names(in: paths.indexes) else { return 0 }   // none kept yet
        var live = Set<String>()
        for e in manifest.entries where e.kind == .folder {
            // An item whose name cannot be made has no file to keep: its own may go.
            if let n = try? indexName(of: e) { live.insert(n) }
        }
        var removed = 0
        for name in names where !live.contains(name) {
            let path = paths.indexes + "/" + name
            // Gone since the listing, or not yet past the grace: kept.
            guard let st = try? Syscall.status(of: path, followLinks: false), now - st.modified >= Self.folderIndexGrace else { continue }
            if (try? Syscall.unlink(path)) != nil { removed += 1 }   // best effort: the next tidy tries again
        }
        if removed > 0 { try? Syscall.fsyncDirectory(paths.indexes) }   // a removal undone by a crash: the next tidy's
        return removed
    }
}

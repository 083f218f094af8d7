import System
import VaultCore
import VaultCrypto

/// The local vault's repack notes (RepackNote), `notes/<name>`: prune
/// and pull write one per piece key among the snapshots the vault holds,
/// and a backup of the vault's owner reads its own to keep the pieces a
/// repack kept.
///
/// Order: prune holds the drop lock exclusively, so no backup of the owner
/// reads notes meanwhile; prune and pull remove every note before their
/// manifest write and write them anew once done. One killed in between
/// leaves no note (the backups store those pieces again, as before notes),
/// never one that names what an older manifest kept; a backup that read
/// one before a pull changed the manifest is the absorb walk's to catch.
/// Another user's backup reads none: it holds no lock prune waits for, and
/// checks after it landed that every pack it named is still there, which
/// a repacked pack is not (DropLock's `confirmLanded`).
public enum RepackNotes {
    /// What every note says now: each repack that readers use (no pack of
    /// its id stands, and it is the only repack of that id), that prune has
    /// not marked to go, and whose table reads. Newest manifest state.
    /// `inItems`: only repacks whose blob is in items/ (the local notes:
    /// a backup here keeps no other, and a thin vault's others would be
    /// fetched from its remote only to be left out).
    static func entries(_ vault: UnlockedVault, inItems: Bool = false) -> [RepackNote.Entry] {
        let manifest = vault.manifest
        var out: [RepackNote.Entry] = []
        var size = RepackNote.emptyLength
        for e in manifest.entries where e.kind == .repack {
            guard let id = BackupItems.storageID(of: e), vault.pack(id) == nil, manifest.pruneMarks[id] == nil,
                  manifest.versions(named: e.name).count == 1, let blob = Hex.decode(e.blobName), blob.count == 16 else { continue }
            if inItems, (try? Syscall.status(of: vault.paths.item(e.blobName))) == nil { continue }
            // A table that does not read leaves the pack out: its pieces are stored again.
            guard let table = try? RepackTable.read(pack: id, contentLength: e.size, { offset, buffer in
                try vault.packChunks.read(e, at: offset, into: buffer, readAhead: 0) { try vault.reader(for: e) }
            }) else { continue }
            // A note a backup would refuse (past RepackNote.maxLength) is
            // never made: the repacks past that leave their pieces to be
            // stored again.
            let grows = RepackNote.entryLength(ranges: table.ranges.count)
            guard size + grows <= RepackNote.maxLength else { continue }
            size += grows
            out.append(RepackNote.Entry(pack: id, blob: blob, ranges: table.ranges.map { ($0.old, $0.length) }))
        }
        return out
    }

    /// Removes every note (a prune, before its manifest write).
    public static func clear(_ vault: UnlockedVault) throws {
        try remove(in: vault.paths, except: [])
    }

    /// Writes a note for each piece key among the vault's snapshots (those
    /// whose record opens), and removes any other. Returns how many.
    @discardableResult
    public static func write(_ vault: UnlockedVault) throws -> Int {
        let vaultID = vault.vault.header.vaultID
        let entries = entries(vault, inItems: true)
        var keys: [String: PieceKey] = [:]
        // No repack, no note: the snapshots are not read.
        for e in vault.snapshotEntries where !entries.isEmpty {
            // A snapshot that does not open names no host to tell.
            guard var content = try? vault.snapshotContent(e) else { continue }
            defer { SecureZero.zero(&content) }
            guard let s = Snapshot.decode(content) else { continue }
            keys[try RepackNote.name(key: s.key, vaultID: vaultID)] = s.key
        }
        let note = RepackNote(generation: vault.manifest.generation, entries: entries)
        if !keys.isEmpty { try Vault.ensureDirectory(vault.paths.notes) }
        for (name, key) in keys {
            try VaultDirectory.atomicWrite(try note.seal(key: key, vaultID: vaultID), to: vault.paths.notes + "/" + name, mode: 0o600)
        }
        try remove(in: vault.paths, except: Set(keys.keys))
        return keys.count
    }

    private static func remove(in paths: VaultPaths, except keep: Set<String>) throws {
        let names: [String]
        do { names = try VaultDirectory.names(in: paths.notes) } catch let error as SystemError where error.errno == .noSuchFile {
            return
        }
        var removed = false
        for name in names where name.utf8.count == 32 && Hex.decode(name) != nil && !keep.contains(name) {
            do { try Syscall.unlink(paths.notes + "/" + name) } catch let error as SystemError where error.errno == .noSuchFile {}
            removed = true
        }
        if removed { try Syscall.fsyncDirectory(paths.notes) }
    }

    /// Removes the note of piece key `key`, if there is one: nothing it
    /// could fail at is worse than the note staying (a hint).
    static func remove(_ vault: UnlockedVault, key: PieceKey) {
        guard let name = try? RepackNote.name(key: key, vaultID: vault.vault.header.vaultID) else { return }
        if (try? Syscall.unlink(vault.paths.notes + "/" + name)) != nil { try? Syscall.fsyncDirectory(vault.paths.notes) }
    }

    /// For the owner's backup: its note's entries whose repack is in
    /// items/, as tables by pack id. No note, one that does not open under
    /// `key`, or one that cannot be read: none (a hint, like the cache).
    public static func kept(_ vault: Vault, key: PieceKey) -> [[UInt8]: RepackTable] {
        guard let name = try? RepackNote.name(key: key, vaultID: vault.header.vaultID),
              let bytes = try? VaultDirectory.readFile(vault.paths.notes + "/" + name, limit: RepackNote.maxLength),
              let note = try? RepackNote.open(bytes, key: key, vaultID: vault.header.vaultID) else { return [:] }
        return note.tables { (try? Syscall.status(of: vault.paths.item(Hex.encode($0.blob)))) != nil }
    }
}

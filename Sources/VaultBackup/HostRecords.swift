import System
import VaultCore
import VaultCrypto

/// The owner's side of host records (HostRecord): one per piece key among
/// the snapshots the vault holds, built from its manifest, with that
/// host's repack note beside it while the vault holds repacks. A remote's
/// `hosts/` is then made to hold these, and the others retired (RemoteHostRecords).
public enum HostRecords {
    public struct Built {
        /// Sealed records by name (32 hex).
        public var records: [String: [UInt8]] = [:]
        /// Snapshots whose record could not be read: their host gets no
        /// record from them (`vault check` is what names them).
        public var unreadable = 0
    }

    public static func build(_ vault: UnlockedVault) throws -> Built {
        let manifest = vault.manifest
        var usable = Set<[UInt8]>(), gone = Set(manifest.tombstones.ids)
        for e in manifest.entries where e.kind == .pack || e.kind == .repack {
            guard let id = BackupItems.storageID(of: e) else { continue }
            // A repacked pack kept only what snapshots then needed: a host's
            // other pieces in it are gone, so the whole pack is, for reuse.
            if e.kind == .pack && manifest.pruneMarks[id] == nil { usable.insert(id) } else { gone.insert(id) }
        }
        gone.formUnion(manifest.pruneMarks.packs)
        gone.subtract(usable)

        var built = Built()
        var byName: [String: (key: PieceKey, taken: Set<[UInt8]>, missing: Set<[UInt8]>)] = [:]
        for e in vault.snapshotEntries {
            guard let id = Hex.decode(String(e.name.dropFirst(BackupItems.snapshotPrefix.count))) else { continue }
            let snapshot: Snapshot
            do {
                var content = try vault.snapshotContent(e)
                defer { SecureZero.zero(&content) }
                guard let s = Snapshot.decode(content) else { built.unreadable += 1; continue }
                snapshot = s
            } catch let error as SystemError {
                throw error
            } catch {
                built.unreadable += 1
                continue
            }
            let name = try HostRecord.name(key: snapshot.key, vaultID: vault.vault.header.vaultID)
            byName[name, default: (snapshot.key, [], [])].taken.insert(id)
        }
        // A host whose snapshot waits refused for packs the vault lacks
        // (never arrived, or set aside as damaged) is told they are gone:
        // else it would name them in every snapshot after it.
        var refused = try vault.refusedSnapshots()
        defer { for i in refused.indices { SecureZero.zero(&refused[i].content) } }
        for (content, missing) in refused {
            guard let snapshot = Snapshot.decode(content) else { continue }
            let name = try HostRecord.name(key: snapshot.key, vaultID: vault.vault.header.vaultID)
            byName[name, default: (snapshot.key, [], [])].missing.formUnion(missing)
        }
        // Beside each record, the host's repack note (RepackNote) when the
        // vault holds repacks: what each kept, so the host keeps naming
        // those pieces of a pack its record calls gone.
        let repacks = RepackNotes.entries(vault)
        for (name, host) in byName {
            let record = HostRecord(generation: manifest.generation, taken: host.taken, usable: usable, gone: gone.union(host.missing))
            built.records[name] = try record.seal(key: host.key, vaultID: vault.vault.header.vaultID)
            guard !repacks.isEmpty else { continue }
            let note = RepackNote(generation: manifest.generation, entries: repacks)
            built.records[try RepackNote.name(key: host.key, vaultID: vault.vault.header.vaultID)] = try note.seal(key: host.key, vaultID: vault.vault.header.vaultID)
        }
        return built
    }
}

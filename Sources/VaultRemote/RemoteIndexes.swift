import System
import VaultCore

/// Folder indexes on a remote (docs/FORMAT.md, "Remote copy" and "Folder
/// indexes"): `indexes/<32 hex>`, byte for byte the vault's own files.
/// Without them a folder that came by pull or clone was listed on its first
/// mount by a pass over its whole archive (every chunk decrypted; from the
/// remote, on a thin vault), which the machine that added it had done
/// without. The files are a cache, never the only copy of anything, so
/// every rule here is the cheap direction:
///
/// - `push` (no password) uploads each file in `indexes/` the remote does
///   not list at that size; it deletes none (without the key it cannot
///   tell which item a name is of);
/// - `pull` and `clone` (the key) fetch the index of each folder item
///   version of their manifest that has none here, when the remote lists
///   it at most 256 MiB long, and keep only one that opens under its name
///   and checks as that item's (`keepFetchedIndex`): a hostile remote can
///   withhold one, or send junk, and either costs a pass;
/// - a pull counts every other file under `indexes/`, and each one that no
///   folder item of this manifest or of the remote's names, as a stray
///   (RemoteStrays): deleted once seen unchanged for a day, so an index a
///   newer push just put there for an item this pull has not seen stays.
public enum RemoteIndexes {
    static let directory = "indexes"
    static let prefix = directory + "/"

    /// The remote's index files of a plain name (32 hex), by name, at most
    /// `FolderIndexFile.maxLength` long.
    public static func listed(_ files: [String: UInt64]) -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        for (path, size) in files where path.hasPrefix(prefix) && size <= UInt64(FolderIndexFile.maxLength) {
            let name = path.dropFirst(prefix.count)
            if RemoteNames.isItemID(name) { out[String(name)] = size }
        }
        return out
    }

    /// Push: the files in the vault's `indexes/` that the remote does not
    /// list at their size, uploaded. Returns how many and their bytes.
    static func upload(_ files: [String: UInt64], paths: VaultPaths, target: String, rclone: Rclone) throws -> (Int, UInt64) {
        // No directory yet: no index was ever kept here.
        guard let names = try? VaultDirectory.names(in: paths.indexes) else { return (0, 0) }
        var missing: [String] = [], bytes: UInt64 = 0
        for name in names.sorted() where RemoteNames.isItemID(Substring(name)) {
            guard let st = try Syscall.status(of: paths.indexes + "/" + name, followLinks: false), st.kind == .regular,
                  st.size <= UInt64(FolderIndexFile.maxLength), files[prefix + name] != st.size else { continue }
            missing.append(name)
            bytes += st.size
        }
        try rclone.upload(missing, from: paths.indexes, to: RemoteNames.join(target, directory))
        return (missing.count, bytes)
    }

    /// Pull and clone: the index of each folder item version of `vault`'s
    /// manifest that has none kept here and that the remote lists, fetched
    /// and kept if it opens and checks. Returns how many were kept and
    /// their bytes. A failure fetching is the cache's: nothing kept, the
    /// first mount makes the pass.
    /// `there`: the remote's index files (`listed`).
    public static func fetch(_ vault: UnlockedVault, there: [String: UInt64], target: String, rclone: Rclone) -> (Int, UInt64) {
        // One listing of what is kept here, not a status per folder. None
        // yet (or unlistable): every index the remote has is wanted.
        let here = Set((try? VaultDirectory.names(in: vault.vault.paths.indexes)) ?? [])
        let wanted = vault.folderIndexNames().filter { name, _ in there[name] != nil && !here.contains(name) }
        guard !wanted.isEmpty, !vault.readOnly,
              let staging = try? StagingDirectory(beside: vault.vault.paths.root, purpose: "indexes") else { return (0, 0) }   // a cache: see above
        guard (try? rclone.download(wanted.keys.sorted().map { prefix + $0 }, from: target, into: staging.path)) != nil else {
            return (0, 0)   // a cache: see above
        }
        var kept = 0, bytes: UInt64 = 0
        for (name, entry) in wanted.sorted(by: { $0.key < $1.key }) {
            // Not there (gone since the listing) or over the bound: not kept.
            guard let data = try? VaultDirectory.readFile(staging.path + "/" + prefix + name, limit: FolderIndexFile.maxLength),
                  vault.keepFetchedIndex(data, name: name, of: entry) else { continue }
            kept += 1
            bytes += UInt64(data.count)
        }
        return (kept, bytes)
    }

    /// Pull: the files under `indexes/` that are no index of a folder item
    /// in `named` (this vault's and the fetched manifest's names), by path,
    /// for RemoteStrays.
    static func strays(_ files: [String: UInt64], named: Set<String>) -> [String: UInt64] {
        files.filter { path, size in
            guard path.hasPrefix(prefix) else { return false }
            let name = String(path.dropFirst(prefix.count))
            return !named.contains(name) || size > UInt64(FolderIndexFile.maxLength)
        }
    }
}

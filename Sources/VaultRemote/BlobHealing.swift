import System
import VaultCore

/// `check --repair`: blobs found damaged or missing here, put back from a
/// remote that holds a good copy (issue 40: a flipped byte on the local
/// disk could be reported, never mended). Each remote is asked in turn,
/// for the blobs still not healed: one listing, one batch download into a
/// staging directory beside the vault, then each copy passes every check a
/// reader makes before it is renamed over the local one
/// (UnlockedVault.replaceBlob). A copy that fails stays out, and the next
/// remote is asked; nothing unchecked ever lands in items/.
public enum BlobHealing {
    /// What was healed: blob name → the remote it came from.
    public static func heal(_ entries: [ManifestEntry], in vault: UnlockedVault, remotes: [RemoteConfig.Remote],
                            rclone: Rclone) throws -> [String: String] {
        var healed: [String: String] = [:]
        var waiting = Dictionary(entries.map { ($0.blobName, $0) }) { a, _ in a }
        for remote in remotes where !waiting.isEmpty {
            let listed = RemoteLayout(try rclone.list(remote.target)).items
            let here = waiting.keys.filter { listed[$0] != nil }.sorted()
            guard !here.isEmpty else { continue }
            let staging = try StagingDirectory(beside: vault.vault.paths.root + "/items", purpose: "healing")
            try rclone.download(here.map { "items/" + $0 }, from: remote.target, into: staging.path)
            for blob in here {
                guard let entry = waiting[blob] else { continue }
                do {
                    try vault.replaceBlob(entry, with: staging.path + "/items/" + blob)
                } catch VaultError.corruptedOrTampered, VaultError.itemCorrupted, VaultError.unsafeArchiveEntry {
                    continue   // this remote's copy is no better: the next remote may have one
                } catch let error as SystemError where error.errno == .noSuchFile {
                    continue   // listed, but not downloaded (gone meanwhile)
                }
                healed[blob] = remote.name
                waiting[blob] = nil
            }
        }
        return healed
    }
}

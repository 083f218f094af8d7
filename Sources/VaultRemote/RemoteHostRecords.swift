import System
import VaultCore
import VaultCrypto

/// A remote's `hosts/`: the records the owner publishes for its `backup
/// --to` hosts (VaultBackup's HostRecord, docs/FORMAT.md "Host records"),
/// which let a host that can read them but list nothing reuse its packs.
/// Only the owner writes here, with full rights.
public enum RemoteHostRecords {
    public static let directory = "hosts"

    /// Makes `hosts/` at `target` hold exactly `records`: each uploaded as
    /// `.push-<random>` and moved over its name, so a host reads the old
    /// record or the new one, whole; then the records `there` (the names
    /// the caller's listing found in `hosts/`) of hosts the vault no longer
    /// holds a snapshot of are deleted. Returns how many went up.
    @discardableResult
    public static func publish(_ records: [String: [UInt8]], there: Set<String>, target: String, rclone: Rclone) throws -> Int {
        for (name, bytes) in records.sorted(by: { $0.key < $1.key }) {
            let local = rclone.scratch + "/record-" + name
            try VaultDirectory.atomicWrite(bytes, to: local, mode: 0o600)
            let temp = RemoteNames.join(target, RemoteNames.pushPrefix + Hex.encode(SecureRandom.bytes(16)))
            try rclone.uploadFile(local, to: temp)
            try rclone.move(temp, to: RemoteNames.join(target, directory + "/" + name))
            try? Syscall.unlink(local) // a leftover goes with the scratch directory
        }
        let stale = there.filter { records[$0] == nil }.sorted()
        try rclone.delete(stale, in: RemoteNames.join(target, directory))
        return records.count
    }
}

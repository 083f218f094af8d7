import System
import VaultBackup
import VaultCore
import VaultCrypto

/// What a listing of a remote's `hosts/` showed: the names that hold a
/// record (or a repack note), and those retired already.
public struct HostRecordNames: Sendable {
    public var live: Set<String> = []
    public var retired: Set<String> = []
    public init(live: Set<String> = [], retired: Set<String> = []) { (self.live, self.retired) = (live, retired) }
}

/// A remote's `hosts/`: the records the owner publishes for its `backup
/// --to` hosts (VaultBackup's HostRecord, docs/FORMAT.md "Host records"),
/// which let a host that can read them but list nothing reuse its packs.
/// Only the owner writes here, with full rights.
public enum RemoteHostRecords {
    public static let directory = "hosts"

    /// Makes `hosts/` at `target` hold exactly `records`: each uploaded as
    /// `.push-<random>` and moved over its name, so a host reads the old
    /// record or the new one, whole; then the records `there.live` (the
    /// names the caller's listing found in `hosts/`, retired ones left out) of
    /// hosts the vault no longer holds a snapshot of are retired: replaced,
    /// the same way, by `HostRecord.retired` (deleted, a record would read
    /// as "none published yet" to a host that never read one, which trusts
    /// every pack it sent). So are the names in `retire` (ForgottenHosts:
    /// hosts whose snapshots any copy of this vault forgot, published or not) that
    /// hold no current record and are not retired there already. Returns
    /// how many records went up.
    @discardableResult
    public static func publish(_ records: [String: [UInt8]], there: HostRecordNames, retire: Set<String> = [],
                               target: String, rclone: Rclone) throws -> Int {
        let stale = there.live.union(retire.subtracting(there.retired)).filter { records[$0] == nil }.sorted()
        let all = records.map { ($0.key, $0.value) } + stale.map { ($0, HostRecord.retired) }
        for (name, bytes) in all.sorted(by: { $0.0 < $1.0 }) {
            let local = rclone.scratch + "/record-" + name
            try VaultDirectory.atomicWrite(bytes, to: local, mode: 0o600)
            let temp = RemoteNames.join(target, RemoteNames.pushPrefix + Hex.encode(SecureRandom.bytes(16)))
            try rclone.uploadFile(local, to: temp)
            try rclone.move(temp, to: RemoteNames.join(target, directory + "/" + name))
            try? Syscall.unlink(local) // a leftover goes with the scratch directory
        }
        return records.count
    }
}

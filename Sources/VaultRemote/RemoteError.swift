/// What can go wrong between a vault and its off-site copy. The CLI's
/// ErrorReport turns each case into one message and an exit code.
public enum RemoteError: Error, Equatable, Sendable {
    /// rclone failed (unreachable, refused, no such remote): its own last
    /// error line, made printable, in `message`.
    case rcloneFailed(operation: String, message: String)
    /// rclone is not installed (or VAULT_RCLONE names nothing runnable).
    case rcloneMissing(program: String)
    /// The remote's manifest is newer than the one this vault last pushed
    /// or pulled: another machine pushed. Push refuses (exit 11).
    case remoteChanged(remote: UInt64, known: UInt64)
    /// This vault's key and the remote's differ: one of them was rekeyed
    /// since they were last in step, and items under two keys cannot be
    /// merged (exit 11). `remoteChanged`: the remote moved on too.
    case keysDiffer(remoteChanged: Bool)
    /// The remote's manifest is older than one this vault already had from
    /// it: an older copy was put back there. `changedSince`: and written on
    /// since (it holds what this vault does not), so a push cannot simply
    /// put ours back.
    case remoteRollback(remote: UInt64, known: UInt64, changedSince: Bool)
    /// Both this vault's header and the remote's changed (key slots or a
    /// password, on two machines) since they were last in step, or neither
    /// is newer: nothing is replaced (exit 11).
    case headersDiverged
    /// The remote's manifest opened with another generation than the one
    /// it announced: it changed (or lied) between two reads.
    case remoteChangedWhileReading(announced: UInt64, found: UInt64)
    /// There is no vault at the remote target (no header or manifest).
    case noRemoteVault(target: String)
    /// The remote holds another vault (another vault id).
    case otherVault(target: String)
    /// The remote's header does not carry the expected public key
    /// fingerprint: the one given (`given`: --fingerprint, where a typo is
    /// the likelier cause) or the one pinned at the first `add --to`.
    case fingerprintMismatch(expected: String, found: String, given: Bool)
    /// No remote of that name is configured for this vault.
    case noSuchRemote(String)
    /// A remote of that name is configured already.
    case remoteExists(String)
    /// A remote name or target that cannot be stored.
    case invalidRemote(String)
    /// Something the remote sent is not what a vault remote holds.
    case malformedRemote(String)
    /// An unfinished rekey must finish (any unlock does it) before a push.
    case rekeyPending
}

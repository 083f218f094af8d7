/// What can go wrong between a vault and its off-site copy. The CLI's
/// ErrorReport turns each case into one message and an exit code.
public enum RemoteError: Error, Equatable, Sendable {
    /// rclone failed (unreachable, refused, no such remote) at `operation`:
    /// its own last error line, or how it ended when it said nothing.
    case rcloneFailed(operation: RcloneOperation, failure: RcloneFailure)
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
    /// A remote name outside the rule (1-64 of A-Z a-z 0-9 . _ -, not
    /// starting with . or -).
    case invalidRemoteName(String)
    /// A remote target that cannot be stored (empty, a line break, or
    /// starting with '-', which rclone would take for a flag).
    case invalidRemoteTarget(String)
    /// The vault has `RemoteConfig.maxRemotes` remotes already.
    case tooManyRemotes
    /// Something the remote sent is not what a vault remote holds (or the
    /// vault's own record of its remotes is damaged).
    case malformedRemote(RemoteDamage)
    /// An unfinished rekey must finish (any unlock does it) before a push.
    case rekeyPending
}

/// What rclone was asked to do when it failed (`RemoteError.rcloneFailed`).
public enum RcloneOperation: Sendable {
    case list, read, upload, download, move, delete
}

/// How rclone failed (`RemoteError.rcloneFailed`).
public enum RcloneFailure: Equatable, Sendable {
    /// Its last error line (made printable): rclone's own words.
    case said(String)
    /// It exited with this status and said nothing.
    case exited(Int32)
    /// It was killed by this signal.
    case signaled(Int32)
}

/// What is wrong with what a remote sent (`RemoteError.malformedRemote`).
public enum RemoteDamage: Equatable, Sendable {
    /// Its header or manifest has a size no vault's has.
    case impossibleSize
    /// Its header has a size no vault header has.
    case headerImpossibleSize
    /// Its vault.header fails its checksum.
    case headerChecksum
    /// Its header is not a vault header.
    case notAVaultHeader
    /// Its header's MAC does not verify under this vault's key.
    case headerDoesNotVerify
    /// Its manifest is shorter than a manifest's clear prefix.
    case manifestTooShort
    /// Its manifest does not start as a manifest does.
    case notAManifest
    /// Its manifest has a format version this build does not know.
    case manifestVersion(UInt8)
    /// Its manifest names a blob that is on neither side (this item id, hex).
    case blobOnNeitherSide(String)
    /// This file changed on the remote while it was downloaded.
    case changedWhileDownloading(String)
    /// rclone's answer to `operation` is longer than `limit` bytes.
    case answerTooLarge(operation: RcloneOperation, limit: Int)
    /// rclone's listing is not the JSON it should be.
    case listingNotJSON
    /// The remote lists more than `max` files: not a vault copy.
    case tooManyFiles(max: Int)
    /// A listed file with a negative size (its path).
    case negativeSize(String)
    /// The vault's own remotes file is damaged.
    case remotesFileDamaged
    /// An answer to a range read of this file is not the range asked for
    /// (another range, a short or long body, no Content-Range).
    case wrongAnswer(String)
    /// The vault's `thin` file is damaged.
    case thinFileDamaged
    /// A blob this vault just uploaded is not there as it was sent (its
    /// size or last bytes differ, or it is absent): this item id, hex.
    case notAsSent(String)
}

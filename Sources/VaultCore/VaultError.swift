/// Errors of the vault library. The terminal layer maps each to one message
/// and one exit code; the library itself never prints or exits. A failed
/// system call is the syscall layer's `SystemError`, passed through as is.
public enum VaultError: Error, Equatable, Sendable {
    /// Stored data failed authentication or did not have its exact shape.
    /// Every such failure reads the same, whatever the cause, so the error
    /// reveals nothing about which check an attacker's edit tripped.
    case corruptedOrTampered
    /// The same, for one named item.
    case itemCorrupted(name: String)
    /// A version-3 vault header whose checksum does not match (or that is
    /// cut short): accidental damage, found before any KDF ran, so it says
    /// nothing about the password and never counts as a wrong attempt.
    case headerDamaged
    /// The password (or kit passphrase) did not unwrap the master key.
    case wrongPassword
    /// The key file given opens none of the vault's key-file slots.
    case wrongKeyFile
    /// A wrong password, after which the next attempt must wait this long.
    case wrongPasswordDelayed(retryInSeconds: Int)
    /// The password opened none of the password slots tried, and these were
    /// not tried: together they would cost more Argon2id than one unlock
    /// spends on a header not yet authenticated (KDFLimits.unlockBudget).
    /// `retryInSeconds` as for `wrongPasswordDelayed` (0: no wait).
    case slotsNotTried(names: [String], retryInSeconds: Int)
    /// Attempts are paused after repeated wrong passwords; nothing was tried.
    case lockedOut(retryInSeconds: Int)
    /// A recovery kit that is not there at all, or whose lines are right
    /// but whose content is not a kit.
    case kitDamaged
    /// One numbered line of a recovery kit is wrong (the first, in line order).
    case kitLine(line: Int, problem: KitLineProblem)
    /// A recovery kit made for another vault.
    case kitForAnotherVault
    /// A recovery kit made before the vault was rekeyed.
    case kitStale
    /// No vault at the path (no header there, or not a vault header).
    case notAVault
    /// A vault header of a format version this build cannot read.
    case unsupportedVersion(Int)
    /// An item whose header sets flag bits this build does not know (a later
    /// version's codec, or damage: nothing has been decoded to tell which).
    /// `item` is its name where known.
    case newerItemFormat(item: String, flags: UInt16)
    /// Another process holds the writer lock.
    case busy
    /// This process cannot write the vault at all (a read-only mount,
    /// another user's copy); reading works.
    case readOnly(path: String, reason: String)
    /// The target exists and will not be overwritten.
    case alreadyExists(path: String)
    /// No item of that name.
    case noSuchItem(name: String)
    /// The folder item exists but holds no file at that path ("get FOLDER/PATH").
    case noSuchFileInFolder(folder: String, path: String)
    /// The item exists but has no such version (or none at that time).
    case noSuchVersion(name: String, version: String)
    /// The item has as many versions as a manifest may hold
    /// (`Manifest.maxVersions`): forget some first.
    case tooManyVersions(name: String)
    /// An item id this vault held once and let go (a tombstone,
    /// Tombstones.swift): an id is never taken in again.
    case itemIDRemoved(name: String)
    /// A backup snapshot waiting in the inbox (`inbox/<dropIn>.item`) whose
    /// envelope opens but whose record does not: prune stops, since the
    /// packs it needs cannot be known.
    case waitingSnapshotUnreadable(dropIn: String)
    /// An item name that cannot be stored (empty, too long, control characters, '/').
    case invalidName(String)
    /// A path inside the vault is a symbolic link or has the wrong type.
    case unsafeVaultPath(String)
    /// A folder item holds an entry that would land outside the restore
    /// target (absolute path, "..", through a symlink, a device); nothing
    /// of that item was written.
    case unsafeArchiveEntry(item: String, entry: String, reason: String)
    /// A directory for plaintext copies that is not ours, or that other
    /// users may write (they could swap what the editor opens).
    case unsafeScratch(String)
    /// The manifest is older than one this machine has seen of this vault:
    /// an older copy was put back (a rollback). Nothing was changed.
    case rollback(seen: UInt64, found: UInt64)
    /// The header's counter (authenticated) is lower than one this machine
    /// saw for the vault: an older `vault.header` was put back, in which a
    /// password since changed or a key slot since removed may still open.
    case headerRollback(seen: UInt64, found: UInt64)
    /// A file the user named (`what`: a key file, a recovery kit) is not a
    /// regular file (`kind`: "a FIFO (named pipe)", "a directory"...); it
    /// was not read.
    case notARegularFile(path: String, what: String, kind: String)
    /// A value was outside what this format or operation allows.
    case invalidArgument(String)
    /// The manifest would exceed what a reader accepts (1,000,000 items or
    /// 256 MiB): the change was not made.
    case manifestFull
}

/// What is wrong with one line of a recovery kit typed by hand.
public enum KitLineProblem: Error, Equatable, Sendable {
    /// No line with this number.
    case missing
    /// Two lines with this number.
    case repeated
    /// A number no kit line has.
    case noSuchLine
    /// Too few or too many characters; `group` is the typed group whose length is off.
    case wrongLength(have: Int, want: Int, group: Int?)
    /// A character that no kit has, in this group.
    case badCharacter(group: Int)
    /// The checksum does not match; `group` is where a single typo would explain it.
    case checksum(group: Int?)
}


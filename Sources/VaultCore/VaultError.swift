import System
import VaultCodecs

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
    /// another user's copy); reading works. `cause` says which.
    case readOnly(path: String, cause: ReadOnlyCause)
    /// The target exists and will not be overwritten.
    case alreadyExists(path: String)
    /// No item of that name.
    case noSuchItem(name: String)
    /// The item is not of the kind the operation needs (a folder, a snapshot).
    case wrongItemKind(name: String, expected: ItemKind)
    /// The folder item exists but holds no file at that path ("get FOLDER/PATH").
    case noSuchFileInFolder(folder: String, path: String)
    /// The folder item holds `path`, but as something that cannot be taken
    /// out alone (`get FOLDER/PATH`): a symbolic link, or a directory
    /// (which `restore` writes).
    case notAFileInFolder(folder: String, path: String, kind: FolderEntryKind)
    /// The item exists but has no such version (or none at that time).
    case noSuchVersion(name: String, version: VersionAsked)
    /// `forget` was asked to drop every version of an item: an item keeps one.
    case forgetsEveryVersion
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
    /// A drop-in's envelope in the inbox (`inbox/<file>`) cannot be read
    /// (the system's answer, not damage): prune or rekey stops before it
    /// changes anything, since what that drop-in holds or needs cannot be
    /// known. Absorb leaves such a drop-in waiting instead.
    case inboxUnreadable(file: String, errno: Errno)
    /// An item name that cannot be stored (empty, too long, control characters, '/').
    case invalidName(String)
    /// A path inside the vault is a symbolic link or has the wrong type.
    case unsafeVaultPath(String)
    /// A folder item holds an entry that would land outside the restore
    /// target (absolute path, "..", through a symlink, a device); nothing
    /// of that item was written.
    case unsafeArchiveEntry(item: String, entry: String, reason: ArchiveError.Refusal)
    /// A file of a folder being added shrank while it was read into the
    /// archive, so its stored copy would be wrong: that add is refused.
    case changedWhileReading(path: String)
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
    /// regular file (`kind`: a FIFO, a directory...); it was not read.
    case notARegularFile(path: String, what: UserFile, kind: FileStatus.Kind)
    /// An input read to its end (a key file, a kit, a move code, rclone's
    /// answer) holds more than `limit` bytes; the rest was not read.
    case inputTooLarge(limit: Int)
    /// Content longer than an item may hold (`ItemCipher.maxContentLength`).
    case itemTooLarge
    /// No key slot of this name.
    case noSuchKeySlot(name: String)
    /// The slot named is not a password slot (`passwd`, `--slot`).
    case notAPasswordSlot(name: String, kind: KeySlot.Kind)
    /// A key slot of this name exists already.
    case keySlotExists(name: String)
    /// The header holds `KeySlot.maxSlots` slots already.
    case tooManyKeySlots
    /// The only slot left that opens the vault: never removed.
    case lastKeySlot(name: String)
    /// A slot name outside the rule (`KeySlot.checkName`).
    case invalidKeySlotName
    /// A key file outside 32 to 4,096 bytes: `bytes` long, read from
    /// `path` (nil: a secret not read from a file).
    case keyFileLength(path: String?, bytes: Int)
    /// A version-1 vault moves to key slots through its password slot; this
    /// unlock used none (a recovery kit).
    case version1NeedsPassword
    /// Rekey keeps the password slot it was unlocked with; this unlock used none.
    case rekeyNeedsPassword
    /// A thin vault's rekey: `count` new blobs it sent and proved on the
    /// remote are no longer there at the end (another machine's push removed
    /// what its list of items does not name). Nothing was switched.
    case rekeyBlobsGone(count: Int)
    /// Argon2id parameters above what a header may carry (2 GiB, 16 passes, 8 lanes).
    case kdfAboveLimits
    /// The header's counter is at its maximum: no header can follow this one.
    case headerCounterExhausted
    /// A caller broke one of this library's preconditions: a bug in vault,
    /// never the user's input or stored data. `Misuse` says which.
    case misuse(Misuse)
    /// The manifest would exceed what a reader accepts (1,000,000 items or
    /// 256 MiB): the change was not made.
    case manifestFull
}

/// Why the vault cannot be changed from here (`VaultError.readOnly`).
public enum ReadOnlyCause: Equatable, Sendable {
    /// It belongs to another user, who shares its inbox with us.
    case anotherUsersVault
    /// Its writer lock cannot be made or opened: the system's answer
    /// (a read-only file system, no permission).
    case denied(Errno)
}

/// A version asked for that an item does not have (`VaultError.noSuchVersion`).
public enum VersionAsked: Equatable, Sendable {
    /// Version number `n`.
    case number(UInt32)
    /// The version current at a time (`--at`): none was added by then.
    case atTime
}

/// What a path in a folder item is, when it is not a file taken out alone
/// (`VaultError.notAFileInFolder`).
public enum FolderEntryKind: Equatable, Sendable {
    case symbolicLink
    case directory
}

/// A file the user names that must be a regular file (`VaultError.notARegularFile`).
public enum UserFile: Equatable, Sendable {
    case keyFile
    case recoveryKit
    case moveCodeFile
    case excludeFile
    case filesFrom
    case configFile
}

/// A broken precondition of the library (`VaultError.misuse`): each one a
/// bug in the caller. The CLI words them as they always read.
public enum Misuse: Equatable, Sendable {
    /// A header of a version this build does not write (2, 3 and 4 only).
    case headerVersionNotWritten(UInt8)
    /// A header sealed with a slot count outside 1...`KeySlot.maxSlots`.
    case keySlotCount
    /// A manifest entry whose id or mode is out of range.
    case entryFieldsOutOfRange
    /// An item id the manifest holds already (or let go).
    case duplicateItemID
    /// A manifest written in an earlier version that cannot hold its entries.
    case manifestVersion(UInt8)
    /// An item header with unknown flags or wrong field lengths.
    case itemHeaderFields
    /// A chunk index past the item's last chunk (or a buffer too small for it).
    case chunkOutOfRange(UInt64)
    /// A master key that is not 32 bytes.
    case masterKeyLength
    /// A file key that is not 32 bytes.
    case fileKeyLength
    /// Something other than backup storage handed to `replaceBackupStorage`.
    case notBackupStorage
    /// A merged manifest no newer than the one it replaces.
    case mergeNotNewer
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
    /// The checksum does not match. `groups`: every group (ascending) in
    /// which one changed character would explain it, so the typo of a
    /// single character is always in one of them; `orChecksum`: a typo in
    /// the checksum's two characters would explain it too. Neither: more
    /// than one typo.
    case checksum(groups: [Int], orChecksum: Bool)
}


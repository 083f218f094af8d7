import System

/// What can go wrong in a backup or a snapshot read, beyond VaultError's cases.
public enum BackupError: Error, Equatable, Sendable {
    /// A snapshot, tree or piece does not match its reference or breaks the
    /// format (docs/FORMAT.md, "Backups"): damaged, or made by a hostile dropper.
    case snapshotCorrupted(snapshot: String, damage: SnapshotDamage)
    /// No snapshot has this id (or prefix), or the prefix names several.
    case noSuchSnapshot(String)
    case ambiguousSnapshot(String)
    /// No entry at this path in the snapshot.
    case noSuchPath(String)
    /// The cache is unusable (it is then ignored; never shown to users).
    case invalidCache
    /// Two backed-up paths end in the same name, which would be one entry.
    case duplicateName(String)
    /// Another user's backup: a prune of the vault ran while it ran and
    /// removed `count` packs its snapshot needs; the snapshot was taken
    /// back and the cache forgot those packs, so a run again stores them.
    case packsRemovedMeanwhile(count: Int)
    /// A directory with more entries than one tree may hold (`Tree.maxLength`
    /// once encoded): the backup stops.
    case treeTooLarge(entries: Int)
    /// A host record (HostRecord) that does not open under this host's
    /// key, or breaks its format: damaged, or not the owner's.
    case hostRecordRefused
    /// A host record older (by generation) than one this host read before:
    /// the storage served a stale copy.
    case hostRecordOlder(seen: UInt64, served: UInt64)
    /// This host read a record before, and the remote holds none now.
    case hostRecordMissing
    /// The owner retired this host's record (`HostRecord.retired`): the
    /// vault holds none of its snapshots any more, so any pack it sent may
    /// have been pruned.
    case hostRecordRetired
    /// `--stdin-from-command`'s command did not exit 0 (or its output
    /// could not be read to the end): no snapshot was made.
    case commandFailed(Termination)
}

/// What is wrong with a snapshot (`BackupError.snapshotCorrupted`, and
/// `SnapshotCheck`'s findings); the CLI words it.
public enum SnapshotDamage: Equatable, Sendable {
    /// Its record does not parse.
    case recordDoesNotParse
    /// A reference names a pack the record does not list (or is too long).
    case referenceOutsidePacks
    /// A piece in this pack (its item name) fails its id or does not decode.
    case pieceCorrupted(pack: String)
    /// A pack it lists (item name) is in the vault neither as a pack nor as a repack.
    case packNotInVault(pack: String)
    /// A piece it needs was not kept when this pack (item name) was repacked.
    case pieceNotKeptInRepack(pack: String)
    /// This pack or repack (item name) is corrupted or tampered.
    case storageCorrupted(name: String)
    /// A directory's record (a tree) does not parse.
    case treeDoesNotParse
    /// Its directories are nested deeper than `SnapshotReader.maxDepth`.
    case nestedTooDeep
    /// Its trees hold more entries than its record counts.
    case moreEntriesThanCounted
    /// It has more entries than a comparison walks (`SnapshotReader.maxEntries`).
    case tooManyEntries
    /// Its item does not open, or another failure kept it from being read.
    case corruptedOrTampered
}

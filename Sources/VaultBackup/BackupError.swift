/// What can go wrong in a backup or a snapshot read, beyond VaultError's cases.
public enum BackupError: Error, Equatable, Sendable {
    /// A snapshot, tree or piece does not match its reference or breaks the
    /// format (docs/FORMAT.md, "Backups"): damaged, or made by a hostile dropper.
    case snapshotCorrupted(snapshot: String, detail: String)
    /// No snapshot has this id (or prefix), or the prefix names several.
    case noSuchSnapshot(String)
    case ambiguousSnapshot(String)
    /// No entry at this path in the snapshot.
    case noSuchPath(String)
    /// The cache is unusable (it is then ignored; never shown to users).
    case invalidCache
    /// Two backed-up paths end in the same name, which would be one entry.
    case duplicateName(String)
    /// An entry that restore will not write: its name, or a link target it
    /// would have to write through.
    case unsafeEntry(path: String, reason: String)
    /// Another user's backup: a prune of the vault ran while it ran and
    /// removed `count` packs its snapshot needs; the snapshot was taken
    /// back and the cache forgot those packs, so a run again stores them.
    case packsRemovedMeanwhile(count: Int)
}

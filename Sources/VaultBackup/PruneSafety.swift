/// How long shared data must have been unused before prune deletes it, in
/// one table (kopia's `maintenance_safety.go` is the anchor): the window
/// every other writer of the vault gets. docs/FORMAT.md ("Forget and
/// prune") and SECURITY.md name the same values.
public enum PruneSafety {
    /// A pack no snapshot needs, a repack no reader uses, or the bytes of
    /// a pack that a repack would drop, go only once prune has found them
    /// so (its mark, PruneMarks in VaultCore) for this long: a `backup
    /// --to` whose pack is in a remote's inbox and whose snapshot is not
    /// yet, or one whose cache still names those pieces, has this long to
    /// land its snapshot. `--grace` sets another (0: at once, for who
    /// knows no backup is running anywhere).
    public static let deleteGrace: Int64 = 24 * 3600

    /// A pack is rewritten as a repack when at most this share of its
    /// piece bytes is needed: a repack writes at most three bytes for each
    /// it frees. It was a half while every host's next backup stored again
    /// what its cache knew of a repacked pack; now the owner's backups and
    /// `backup --to` hosts keep naming what a repack kept (RepackNote), and
    /// only another user's backup into a shared vault stores it again.
    /// Measured (scripts/bench-days.sh's history, 50,000 files, 40 days,
    /// all but 10 forgotten): a half freed 41 % of the vault, three
    /// quarters 47 %, restic's prune 46 %.
    public static let repackWhenNeededAtMost = (numerator: UInt64(3), denominator: UInt64(4))
}

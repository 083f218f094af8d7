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
    /// piece bytes is needed: each host's next backup stores again what
    /// its cache knew in the dropped part (it cannot read the repack's
    /// table), so a repack may cost at most what it frees.
    public static let repackWhenNeededAtMost = (numerator: UInt64(1), denominator: UInt64(2))
}

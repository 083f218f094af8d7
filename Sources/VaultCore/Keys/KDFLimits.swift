import VaultCrypto

/// The one set of Argon2id bounds: what a header or kit may carry (its
/// parser checks them before Argon2 runs, so an edited file cannot make
/// vault allocate more), what `init`, `passwd` and `kit export` accept, and
/// what their help shows. Below the minimums a vault is weak, allowed only
/// with VAULT_ALLOW_WEAK_KDF=1.
public enum KDFLimits {
    public static let maxMemoryMiB: UInt32 = 2048
    public static let maxPasses: UInt32 = 16
    public static let maxLanes: UInt32 = 8
    public static let minimumMemoryMiB: UInt32 = 64
    public static let minimumPasses: UInt32 = 3

    /// The Argon2id work (memory KiB x passes, summed over slots) one unlock
    /// may spend on a header before any slot has authenticated it: two
    /// slots at the maximum cost. A header from a hostile place (a remote,
    /// a copy) can hold 8 slots at the maximum, which would be minutes and
    /// gigabytes for every unlock; past this budget the remaining slots are
    /// not tried and the user is told which ('--slot NAME' tries one).
    public static let unlockBudget: UInt64 = 2 * UInt64(maxMemoryMiB) * 1024 * UInt64(maxPasses)

    /// One slot's share of `unlockBudget`.
    public static func work(_ kdf: Argon2Parameters) -> UInt64 { UInt64(kdf.memoryKiB) * UInt64(kdf.passes) }

    /// The password slots one unlock tries, in order, within `budget`, and
    /// the names of those it does not (a slot too costly for what is left
    /// is skipped; a cheaper one after it is still tried).
    static func withinBudget(_ slots: [KeySlot], budget: UInt64 = unlockBudget) -> (tried: [KeySlot], skipped: [String]) {
        var left = budget, tried: [KeySlot] = [], skipped: [String] = []
        for s in slots {
            guard case .password(let kdf, _) = s.kind else { continue }
            if work(kdf) <= left { left -= work(kdf); tried.append(s) } else { skipped.append(s.name) }
        }
        return (tried, skipped)
    }
}

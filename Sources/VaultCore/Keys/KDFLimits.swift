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
}

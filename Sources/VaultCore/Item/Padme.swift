/// Padmé padding (Nikitin et al., "Reducing Metadata Leakage from Encrypted
/// Files and Communication with PURBs", PETS 2019, section 4): rounds a length
/// up so that only O(log log L) bits of it remain, at most ~12% overhead for
/// small L and under 3.2% above 1 GiB.
public enum Padme {
    /// The padded length of `length` (for `length` >= 2; smaller values are returned as is).
    public static func paddedLength(_ length: UInt64) -> UInt64 {
        guard length >= 2 else { return length }
        let e = UInt64(63 - length.leadingZeroBitCount)          // floor(log2 L)
        let s = UInt64(63 - e.leadingZeroBitCount) + 1            // floor(log2 E) + 1
        let lastBits = e - s
        let mask: UInt64 = (1 << lastBits) - 1
        return (length + mask) & ~mask
    }
}

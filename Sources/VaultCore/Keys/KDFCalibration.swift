import Dispatch
import System
import VaultCrypto

/// Chooses Argon2id costs for this machine at `init`, as LUKS2 does: about
/// 0.5–1 s per unlock, never below 64 MiB / 3 passes, memory capped at 1 GiB
/// and at an eighth of physical memory, then passes raised if still too fast.
public enum KDFCalibration {
    public static let minimum = try! Argon2Parameters(memoryKiB: KDFLimits.minimumMemoryMiB * 1024,
                                                       passes: KDFLimits.minimumPasses, lanes: 1)
    public static let targetSeconds = 0.7
    /// Timed probes at the minimum cost (~0.1–0.2 s each).
    static let probes = 3
    static let maxMemoryKiB: UInt32 = 1024 * 1024

    public static func isWeak(_ p: Argon2Parameters) -> Bool {
        p.memoryKiB < minimum.memoryKiB || p.passes < minimum.passes
    }

    /// Measures one derivation with `p`, in seconds.
    public static func measure(_ p: Argon2Parameters) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try Argon2id.deriveKey(password: Array("calibration".utf8), salt: SecureRandom.bytes(16), parameters: p)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Returns the chosen parameters and the measured time of one unlock.
    public static func calibrate() throws -> (Argon2Parameters, Double) {
        // The fastest of several probes: load (another build, a backup)
        // only ever slows a run, so the minimum is this machine's speed, and
        // one slow probe no longer halves the memory chosen (one probe chose
        // 400, 112 or 64 MiB on the same machine). The first warms the
        // allocator and caches and is not counted.
        _ = try measure(minimum)
        var base = Double.infinity
        for _ in 0..<probes { base = min(base, try measure(minimum)) }
        let physicalKiB = Syscall.physicalMemory / 1024
        let memoryCap = max(minimum.memoryKiB, UInt32(min(UInt64(maxMemoryKiB), physicalKiB / 8)))
        var factor = targetSeconds / max(base, 0.001)
        guard factor > 1.3 else { return (minimum, base) }
        // Memory first (what makes GPU and ASIC attacks costly), in 16 MiB steps.
        let wantMemory = Double(minimum.memoryKiB) * factor
        let memory = max(minimum.memoryKiB, min(memoryCap, UInt32(wantMemory) / 16384 * 16384))
        factor /= Double(memory) / Double(minimum.memoryKiB)
        let passes = max(minimum.passes, min(VaultHeader.maxPasses, UInt32((Double(minimum.passes) * factor).rounded(.down))))
        let chosen = try Argon2Parameters(memoryKiB: memory, passes: passes, lanes: 1)
        return (chosen, try measure(chosen))
    }
}

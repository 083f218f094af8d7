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

    /// The most one unlock may take: above it the choice is corrected.
    public static let ceilingSeconds = 1.0
    /// Corrections after the first guess, each one measured derivation.
    static let corrections = 4

    /// Returns the chosen parameters and the measured time of one unlock.
    /// `measure` times one derivation (injectable: the tests model a
    /// machine whose cost is not linear in memory).
    public static func calibrate(measure: (Argon2Parameters) throws -> Double = measure) throws -> (Argon2Parameters, Double) {
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
        // Memory first (what makes GPU and ASIC attacks costly), in 16 MiB
        // steps. The guess is linear from the probe, but large memory costs
        // more per MiB (caches, page faults; much more when other programs
        // use the memory bus): measured, and corrected until one unlock is
        // within the ceiling (issue 43, item 8: a busy machine's guess of
        // 560 MiB took 3.4 s).
        func stepped(_ kib: Double) -> UInt32 { max(minimum.memoryKiB, min(memoryCap, UInt32(max(0, kib)) / 16384 * 16384)) }
        var memory = stepped(Double(minimum.memoryKiB) * factor)
        var chosen = try Argon2Parameters(memoryKiB: memory, passes: minimum.passes, lanes: 1)
        var seconds = try measure(chosen)
        for _ in 0..<corrections where seconds > targetSeconds * 1.3 && memory > minimum.memoryKiB {
            memory = stepped(Double(memory) * targetSeconds / seconds)
            chosen = try Argon2Parameters(memoryKiB: memory, passes: minimum.passes, lanes: 1)
            seconds = try measure(chosen)
        }
        // Then passes, which cost linearly, if memory reached its cap fast.
        factor = targetSeconds / max(seconds, 0.001)
        if factor > 1.3 {
            let passes = min(VaultHeader.maxPasses, UInt32((Double(minimum.passes) * factor).rounded(.down)))
            let more = try Argon2Parameters(memoryKiB: memory, passes: max(minimum.passes, passes), lanes: 1)
            let t = try measure(more)
            if t <= ceilingSeconds { (chosen, seconds) = (more, t) }
        }
        return (chosen, seconds)
    }
}

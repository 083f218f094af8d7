import System
import Testing
import VaultCrypto
@testable import VaultCore

/// Calibration's choices on modelled machines (no Argon2 runs): time is not
/// linear in memory on a real one, least of all a busy one (issue 43,
/// item 8: a guess of 560 MiB took 3.41 s per unlock).
@Suite("KDF calibration")
struct KDFCalibrationTests {
    /// A machine whose derivation costs `perMiB` seconds per MiB and pass at
    /// 64 MiB, rising with memory by `(1 + MiB / knee)`: what caches, page
    /// faults and a shared memory bus do.
    static func machine(perMiB: Double, knee: Double) -> (Argon2Parameters) -> Double {
        { p in
            let mib = Double(p.memoryKiB) / 1024
            return perMiB * mib * Double(p.passes) / 3 * (1 + mib / knee) / (1 + 64 / knee)
        }
    }

    @Test(arguments: [(0.0008, 100_000.0), (0.0008, 64.0), (0.0004, 32.0), (0.002, 128.0), (0.005, 64.0)])
    func theChoiceStaysWithinTheCeiling(perMiB: Double, knee: Double) throws {
        let model = Self.machine(perMiB: perMiB, knee: knee)
        var calls = 0
        let (p, seconds) = try KDFCalibration.calibrate { calls += 1; return model($0) }
        #expect(seconds == model(p), "the time reported is the chosen cost's")
        #expect(model(p) <= KDFCalibration.ceilingSeconds, "\(p.memoryKiB / 1024) MiB, \(p.passes) passes: \(model(p)) s")
        #expect(!KDFCalibration.isWeak(p))
        #expect(calls <= 1 + 3 + 1 + 4 + 1, "a bounded number of derivations")
    }

    /// A linear machine gets about the target, spent on memory first.
    @Test func aLinearMachineGetsTheTarget() throws {
        let model = Self.machine(perMiB: 0.0005, knee: 1e12)
        let (p, seconds) = try KDFCalibration.calibrate(measure: model)
        #expect(seconds >= 0.45 && seconds <= KDFCalibration.ceilingSeconds, "\(seconds)")
        #expect(p.memoryKiB > KDFCalibration.minimum.memoryKiB)
    }
}

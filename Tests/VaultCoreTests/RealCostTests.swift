import Testing
import VaultCrypto
@testable import VaultCore

/// The few tests that pay real Argon2id costs; every other test injects cheap ones.
@Suite("Real-cost KDF")
struct RealCostTests {
    @Test("calibration never goes below 64 MiB and 3 passes, and respects the header bounds")
    func calibrationFloor() throws {
        let (p, seconds) = try KDFCalibration.calibrate()
        #expect(p.memoryKiB >= 64 * 1024 && p.passes >= 3 && p.lanes == 1)
        #expect(p.memoryKiB <= VaultHeader.maxMemoryKiB && p.passes <= VaultHeader.maxPasses)
        #expect(!KDFCalibration.isWeak(p))
        #expect(seconds > 0)
    }

    @Test("a vault at the minimum real cost unlocks with its password and refuses another")
    func minimumCostVault() throws {
        let t = TempVault()
        try Vault.create(at: t.root, password: TempVault.password("real cost"), kdf: KDFCalibration.minimum)
        #expect(try Vault(at: t.root).header.firstPasswordKDF == KDFCalibration.minimum)
        #expect(throws: VaultError.wrongPassword) {
            try Vault(at: t.root).unlock(password: TempVault.password("real cosT"), forWriting: false)
        }
        _ = try Vault(at: t.root).unlock(password: TempVault.password("real cost"), forWriting: false)
    }
}

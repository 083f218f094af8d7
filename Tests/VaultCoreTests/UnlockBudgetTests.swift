import Testing
@testable import VaultCrypto
@testable import VaultCore

/// A header from a hostile place can ask for 8 password slots at 2 GiB and
/// 16 passes each: one unlock tries slots in order only while their summed
/// Argon2id work stays within two maximal slots, and names the rest.
@Suite struct UnlockBudgetTests {
    static func slot(_ name: String, _ mib: UInt32, _ passes: UInt32) throws -> KeySlot {
        let kdf = try Argon2Parameters(memoryKiB: mib * 1024, passes: passes, lanes: 1)
        return KeySlot(name: name, kind: .password(kdf, salt: [UInt8](repeating: 0, count: 16)), created: 0,
                       wrapNonce: [UInt8](repeating: 0, count: 12), wrapped: [UInt8](repeating: 0, count: 48))
    }

    @Test func eightMaximalSlotsCostTwo() throws {
        let slots = try (1...8).map { try Self.slot("s\($0)", 2048, 16) }
        let (tried, skipped) = KDFLimits.withinBudget(slots)
        #expect(tried.map(\.name) == ["s1", "s2"])
        #expect(skipped == ["s3", "s4", "s5", "s6", "s7", "s8"])
        #expect(KDFLimits.unlockBudget == 2 * 2048 * 1024 * 16)
    }

    @Test func ordinarySlotsAreAllTried() throws {
        let slots = try [Self.slot("a", 1024, 4), Self.slot("b", 256, 3), Self.slot("c", 64, 3)]
        #expect(KDFLimits.withinBudget(slots).tried.map(\.name) == ["a", "b", "c"])
        #expect(KDFLimits.withinBudget(slots).skipped.isEmpty)
    }

    /// A costly slot past the budget is skipped; a cheap one after it is
    /// still tried (a user's own password slot behind an attacker's).
    @Test func aCheapSlotAfterTheBudgetIsStillTried() throws {
        let slots = try [Self.slot("x", 2048, 16), Self.slot("y", 2048, 15), Self.slot("z", 2048, 16), Self.slot("me", 64, 3)]
        let (tried, skipped) = KDFLimits.withinBudget(slots)
        #expect(tried.map(\.name) == ["x", "y", "me"] && skipped == ["z"])
    }

    /// The budget is a bound, not a count: with none left, nothing is tried.
    @Test func aZeroBudgetTriesNothing() throws {
        let cheap = try KDFLimits.withinBudget([Self.slot("a", 1, 1)], budget: 0)
        #expect(cheap.tried.isEmpty && cheap.skipped == ["a"])
    }
}

import Foundation
import Testing
import VaultCrypto
@testable import VaultCore

/// Regression tests for what the fuzz targets (Fuzz/) found; each names the
/// minimised input kept under Fuzz/Corpus/<target>/crash-* (which
/// `make fuzz` also replays first).
@Suite("Fuzz findings")
struct FuzzFindingTests {
    /// Fuzz/Corpus/kit/crash-dash-before-line-number: FORMAT.md ("Recovery
    /// kit") says a reader ignores `-` anywhere in a line: it removes spaces,
    /// tabs and `-`, then takes the first two characters as the line number
    /// and the last two as the checksum. KitArmor.decode removed `-` only
    /// from the characters between them, so a dash typed in or next to the
    /// line number or the checksum failed the line as damaged (fixed).
    @Test(arguments: [(3, 0), (3, 1), (9, 0), (0, -2), (9, -1)])
    func kitDashesAreIgnoredAnywhereInALine(line: Int, at: Int) throws {
        let payload = (0..<RecoveryKit.length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        var lines = KitArmor.armor(payload).split(separator: "\n").map(String.init)
        let l = line + 1   // lines[0] is the BEGIN marker
        let offset = at >= 0 ? at : lines[l].count + 1 + at   // -1: after the checksum, -2: inside it
        lines[l].insert("-", at: lines[l].index(lines[l].startIndex, offsetBy: offset))
        let decoded = try KitArmor.decode(lines.joined(separator: "\n"))
        #expect(decoded == payload, "line '\(lines[l])'")
    }
}

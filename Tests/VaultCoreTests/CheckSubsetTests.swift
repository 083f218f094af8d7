import Testing
@testable import VaultCore

/// `check --read-data-subset`: the parts n/m partition the ids (each in
/// exactly one part), and a percentage takes about that share.
@Suite struct CheckSubsetTests {
    @Test func partsPartitionTheIDs() {
        var rng = SystemRandomNumberGenerator()
        let ids = (0..<2000).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        for m in [1, 2, 3, 7] as [UInt32] {
            for id in ids {
                #expect((1...m).filter { CheckSubset.part($0, of: m).contains(id) }.count == 1)
            }
        }
        let tenth = ids.filter { CheckSubset.percent(10).contains($0) }.count
        #expect((120...280).contains(tenth), "10% of 2000 took \(tenth)")
        #expect(ids.allSatisfy { CheckSubset.percent(100).contains($0) })
        #expect(CheckSubset.percent(50).contains([0x7f, 0xff, 0xff, 0xff] + [UInt8](repeating: 0, count: 12)))
        #expect(!CheckSubset.percent(50).contains([0x80, 0, 0, 0] + [UInt8](repeating: 0, count: 12)))
    }
}

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
        #expect(!CheckSubset.percent(50).contains(ids[0]), "a percentage is drawn, not by id")
    }

    /// A percentage draws blobs at random, each taken while it brings the
    /// sum nearer that share: within half a blob of it.
    @Test func aPercentageReadsAboutThatShareOfTheBytes() throws {
        var rng = SystemRandomNumberGenerator()
        for count in [5, 40, 2000] {
            let entries = try (0..<count).map { _ in
                try ManifestEntry(itemID: (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }, fileKey: FileKey.random(),
                                  kind: .file, origin: .unlocked, mode: 0o600, size: UInt64.random(in: 1...(32 << 20), using: &rng),
                                  fileCount: 1, added: 0, modified: 0, name: "f")
            }
            let total = entries.reduce(UInt64(0)) { $0 + $1.size }, largest = entries.map(\.size).max()!
            for p in [10.0, 50, 100] {
                let chosen = CheckSubset.percent(p).choose(entries, using: &rng)
                let bytes = entries.filter { chosen.contains($0.itemID) }.reduce(UInt64(0)) { $0 + $1.size }
                #expect(abs(Double(bytes) - Double(total) * p / 100) <= Double(largest) / 2,
                        "\(p)% of \(count) blobs read \(bytes) of \(total)")
            }
        }
    }
}

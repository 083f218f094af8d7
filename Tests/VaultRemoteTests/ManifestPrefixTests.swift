import Testing
import VaultCore
@testable import VaultRemote

/// The clear generation of a remote's manifest (ManifestPrefix): read from
/// hostile bytes, with one message per way they can be wrong.
@Suite struct ManifestPrefixTests {
    static let start = Manifest.magic
    static let notAManifest = RemoteError.malformedRemote(.notAManifest)

    @Test func readsTheGeneration() throws {
        let g: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(try ManifestPrefix.generation(of: Self.start + [2, 0, 0, 0] + g) == 0x0102_0304_0506_0708)
        #expect(try ManifestPrefix.generation(of: Self.start + [3, 0, 0, 0] + g + [9, 9]) == 0x0102_0304_0506_0708)
        #expect(try ManifestPrefix.generation(of: Self.start + [5, 0, 0, 0] + g) == 0x0102_0304_0506_0708)
        #expect(try ManifestPrefix.generation(of: Self.start + [7, 0, 0, 0] + g) == 0x0102_0304_0506_0708)
        // The identity is the first 32 bytes, which hold the write's random nonce.
        let file = Self.start + [5, 0, 0, 0] + g + Array(0..<12) + [0xaa, 0xbb]
        #expect(try ManifestPrefix.identity(of: file) == Hex.encode(Array(file.prefix(32))))
        #expect(throws: RemoteError.malformedRemote(.manifestTooShort)) {
            try ManifestPrefix.identity(of: Array(file.prefix(31)))
        }
        #expect(try ManifestPrefix.generation(of: Self.start + [1, 0, 0, 0]) == 0)
        #expect(try ManifestPrefix.generation(of: Self.start + [1, 0, 0, 0] + g) == 0)
    }

    @Test func refusesWhatIsNotAManifestStart() {
        let good = Self.start + [3, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        for n in 0..<12 { #expect(throws: Self.notAManifest) { try ManifestPrefix.generation(of: Array(good[..<n])) } }
        for i in [0, 7, 9, 10, 11] {
            var b = good
            b[i] ^= 1
            #expect(throws: Self.notAManifest) { try ManifestPrefix.generation(of: b) }
        }
    }

    @Test func tooShortAndUnknownVersions() {
        for n in 12..<20 {
            #expect(throws: RemoteError.malformedRemote(.manifestTooShort)) {
                try ManifestPrefix.generation(of: Array((Self.start + [2, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])[..<n]))
            }
        }
        for v: UInt8 in [0, 8, 255] {
            #expect(throws: RemoteError.malformedRemote(.manifestVersion(v))) {
                try ManifestPrefix.generation(of: Self.start + [v, 0, 0, 0] + [UInt8](repeating: 0, count: 8))
            }
        }
    }
}

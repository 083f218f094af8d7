import Testing
import VaultCrypto

@Suite struct SecretBytesTests {
    @Test func equalityComparesContents() throws {
        let a = try SecretBytes(hex: "00112233445566778899aabbccddeeff")
        let b = try SecretBytes(hex: "00112233445566778899aabbccddeeff")
        let c = try SecretBytes(hex: "00112233445566778899aabbccddeefe")
        let first = try SecretBytes(hex: "01112233445566778899aabbccddeeff")
        #expect(a == b)
        #expect(a != c)
        #expect(a != first)
        #expect(try a != a.slice(0..<15))  // lengths differ
        #expect(try SecretBytes(count: 0) == SecretBytes(count: 0))
        #expect(constantTimeEqual([UInt8](hex: "0102"), [UInt8](hex: "0102")))
        #expect(!constantTimeEqual([UInt8](hex: "0102"), [UInt8](hex: "0103")))
        #expect(!constantTimeEqual([UInt8](hex: "0102"), [UInt8](hex: "010200")))
    }

    @Test func newStorageIsZeroed() throws {
        #expect(try SecretBytes(count: 64).bytes == [UInt8](repeating: 0, count: 64))
    }

    @Test func randomValuesDiffer() throws {
        let a = try SecretBytes.random(count: 32), b = try SecretBytes.random(count: 32)
        #expect(a.count == 32)
        #expect(a != b)
        #expect(a.bytes != [UInt8](repeating: 0, count: 32))
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }

    @Test func sliceCopies() throws {
        let a = try SecretBytes(hex: "000102030405060708090a0b")
        let s = try a.slice(2..<6)
        #expect(s.bytes == [2, 3, 4, 5])
        a.withUnsafeMutableBytes { $0[2] = 0xff }
        #expect(s.bytes == [2, 3, 4, 5])  // an independent copy
        #expect(try a.slice(0..<0).count == 0)
        #expect(try a.slice(0..<12).bytes == a.bytes)
    }

    @Test func consumingErasesTheSource() throws {
        var source: [UInt8] = [1, 2, 3, 4]
        let s = try SecretBytes(consuming: &source)
        #expect(source.isEmpty)
        #expect(s.bytes == [1, 2, 3, 4])
    }
}

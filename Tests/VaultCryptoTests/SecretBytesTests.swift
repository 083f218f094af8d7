import Testing
import VaultCrypto

@Suite struct SecretBytesTests {
    @Test func equalityComparesContents() {
        let a = SecretBytes(hex: "00112233445566778899aabbccddeeff")
        let b = SecretBytes(hex: "00112233445566778899aabbccddeeff")
        let c = SecretBytes(hex: "00112233445566778899aabbccddeefe")
        let first = SecretBytes(hex: "01112233445566778899aabbccddeeff")
        #expect(a == b)
        #expect(a != c)
        #expect(a != first)
        #expect(a != a.slice(0..<15))  // lengths differ
        #expect(SecretBytes(count: 0) == SecretBytes(count: 0))
        #expect(constantTimeEqual([UInt8](hex: "0102"), [UInt8](hex: "0102")))
        #expect(!constantTimeEqual([UInt8](hex: "0102"), [UInt8](hex: "0103")))
        #expect(!constantTimeEqual([UInt8](hex: "0102"), [UInt8](hex: "010200")))
    }

    @Test func newStorageIsZeroed() {
        #expect(SecretBytes(count: 64).bytes == [UInt8](repeating: 0, count: 64))
    }

    @Test func randomValuesDiffer() {
        let a = SecretBytes.random(count: 32), b = SecretBytes.random(count: 32)
        #expect(a.count == 32)
        #expect(a != b)
        #expect(a.bytes != [UInt8](repeating: 0, count: 32))
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }

    @Test func sliceCopies() {
        let a = SecretBytes(hex: "000102030405060708090a0b")
        let s = a.slice(2..<6)
        #expect(s.bytes == [2, 3, 4, 5])
        a.withUnsafeMutableBytes { $0[2] = 0xff }
        #expect(s.bytes == [2, 3, 4, 5])  // an independent copy
        #expect(a.slice(0..<0).count == 0)
        #expect(a.slice(0..<12).bytes == a.bytes)
    }

    @Test func consumingErasesTheSource() {
        var source: [UInt8] = [1, 2, 3, 4]
        let s = SecretBytes(consuming: &source)
        #expect(source.isEmpty)
        #expect(s.bytes == [1, 2, 3, 4])
    }
}

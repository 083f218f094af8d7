import Testing
import VaultCrypto

/// RFC 5869 appendix A, test cases 1-3 (HKDF-SHA256).
@Suite struct HKDFTests {
    struct Case: Sendable {
        let ikm, salt, info: [UInt8]
        let length: Int
        let prk, okm: String
    }

    static let cases: [Case] = [
        Case(ikm: [UInt8](repeating: 0x0b, count: 22), salt: Array(0x00...0x0c), info: Array(0xf0...0xf9), length: 42,
             prk: "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
             okm: "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
        Case(ikm: Array(0x00...0x4f), salt: Array(0x60...0xaf), info: Array(0xb0...0xff), length: 82,
             prk: "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
             okm: "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
        // Empty salt and info.
        Case(ikm: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [], length: 42,
             prk: "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
             okm: "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
    ]

    @Test(arguments: cases.indices)
    func rfc5869(index: Int) throws {
        let c = Self.cases[index]
        let prk = try HKDF.extract(salt: c.salt, ikm: c.ikm)
        #expect(prk.bytes == [UInt8](hex: c.prk))
        #expect(try HKDF.expand(prk: prk, info: c.info, length: c.length).bytes == [UInt8](hex: c.okm))
        #expect(try HKDF.deriveKey(ikm: c.ikm, salt: c.salt, info: c.info, length: c.length).bytes == [UInt8](hex: c.okm))
    }

    @Test func outputLengthIsBounded() throws {
        let prk = try SecretBytes.random(count: 32)
        #expect(try HKDF.expand(prk: prk, info: [UInt8](), length: 255 * 32).count == 255 * 32)
        expectInvalidParameter { try HKDF.expand(prk: prk, info: [UInt8](), length: 255 * 32 + 1) }
        expectInvalidParameter { try HKDF.expand(prk: prk, info: [UInt8](), length: 0) }
    }
}

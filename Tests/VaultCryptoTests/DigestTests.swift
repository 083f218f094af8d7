import Testing
import VaultCrypto

@Suite struct DigestTests {
    /// RFC 4231 section 4.3, test case 2.
    @Test func hmacSHA256RFC4231Case2() throws {
        let key = Array("Jefe".utf8), data = Array("what do ya want for nothing?".utf8)
        let mac = [UInt8](hex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(try HMACSHA256.authenticate(key: key, data: data) == mac)
        #expect(try HMACSHA256.verify(mac, key: key, data: data))
        var wrong = mac
        wrong[31] ^= 1
        #expect(try !HMACSHA256.verify(wrong, key: key, data: data))
        #expect(try !HMACSHA256.verify(Array(mac.prefix(16)), key: key, data: data))
    }

    /// FIPS 180-2 appendix B.1: SHA-256("abc"), one-shot and streamed.
    @Test func sha256OfABC() throws {
        let expected = [UInt8](hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try SHA256.hash(Array("abc".utf8)) == expected)
        let h = try SHA256()
        try h.update(Array("a".utf8))
        try h.update([UInt8]())
        try h.update(Array("bc".utf8))
        #expect(try h.finish() == expected)
    }
}

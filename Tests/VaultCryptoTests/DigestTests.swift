import Dispatch
import Synchronization
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

    /// HMACSHA256Key (the key absorbed once, each message on a copy): RFC
    /// 4231 section 4 test cases 1, 2, 4 and 6 (a key longer than the block
    /// is hashed first), the same MACs as the one-shot for keys and messages
    /// of many lengths, and one key used by several threads at once (each
    /// message on its own copy) gives every thread the right MAC.
    @Test func keyedHMACIsTheOneShot() throws {
        let cases: [(key: [UInt8], data: [UInt8], mac: String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (Array(1...25), [UInt8](repeating: 0xcd, count: 50),
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ]
        for c in cases {
            let key = try HMACSHA256Key(try c.key.withUnsafeBytes { try SecretBytes(copying: $0) })
            #expect(try c.data.withUnsafeBytes { try key.authenticate($0) } == [UInt8](hex: c.mac))
        }
        for keyLength in [1, 32, 64, 65] {
            let raw = SecureRandom.bytes(keyLength)
            let key = try HMACSHA256Key(try raw.withUnsafeBytes { try SecretBytes(copying: $0) })
            for length in [0, 1, 55, 56, 63, 64, 65, 1000, 70_000] {
                let data = SecureRandom.bytes(length)
                #expect(try data.withUnsafeBytes { try key.authenticate($0) } == (try HMACSHA256.authenticate(key: raw, data: data)))
            }
        }
        let raw = SecureRandom.bytes(32)
        let shared = try HMACSHA256Key(try raw.withUnsafeBytes { try SecretBytes(copying: $0) })
        let messages = (0..<64).map { SecureRandom.bytes(100 + $0 * 37) }
        let expected = try messages.map { try HMACSHA256.authenticate(key: raw, data: $0) }
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for round in 0..<200 {
                let i = (t * 31 + round) % messages.count
                let mac = try? messages[i].withUnsafeBytes { try shared.authenticate($0) }
                if mac != expected[i] { wrong.withLock { $0 += 1 } }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
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

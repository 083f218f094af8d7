import Testing
import VaultCrypto

@Suite struct SHA3Tests {
    /// FIPS 202 examples (NIST CSRC "SHA3-256"): the empty message and "abc";
    /// the parts are one message.
    @Test func sha3_256KnownAnswers() throws {
        #expect(try SHA3_256.hash([]) == [UInt8](hex: "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"))
        let abc = [UInt8](hex: "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
        #expect(try SHA3_256.hash(Array("abc".utf8)) == abc)
        #expect(try SHA3_256.hash(Array("a".utf8), [], Array("bc".utf8)) == abc)
    }
}

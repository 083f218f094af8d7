import Testing
@testable import VaultCrypto

/// CPace on ristretto255 with SHA-512 against draft-irtf-cfrg-cpace-21,
/// appendix B.3 (the values below are copied from the draft's text).
@Suite struct CPaceTests {
    static let password = "50617373776f7264"                                  // b'Password'
    static let channel = "0b415f696e69746961746f720b425f726573706f6e646572"   // B.3.1 CI
    static let sid = "7e4b4791d6a8ef019b936c79fb7f2c57"
    static let ya = "da3d23700a9e5699258aef94dc060dfda5ebb61f02a5ea77fad53f4ff0976d08"
    static let yb = "d2316b454718c35362d83d69df6320f38578ed5984651435e2949762d900b80d"

    func party(_ scalar: String) throws -> CPace {
        try CPace(password: SecretBytes(hex: Self.password), channel: [UInt8](hex: Self.channel),
                  sid: [UInt8](hex: Self.sid), scalar: SecretBytes(hex: scalar))
    }

    /// B.3.1: the generator.
    @Test func generator() throws {
        let g = try CPace.generator(password: SecretBytes(hex: Self.password), channel: [UInt8](hex: Self.channel),
                                    sid: [UInt8](hex: Self.sid))
        #expect(g.bytes == [UInt8](hex: "222b6b195fe84b1652badb6f6a3ae3d24341e7306967f0b8115b40d5698c7e56"))
    }

    /// B.3.2 to B.3.5: both shares, the secret point, the ISK (initiator-responder).
    @Test func sharesSecretPointAndISK() throws {
        let a = try party(Self.ya), b = try party(Self.yb)
        #expect(a.share == [UInt8](hex: "d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0eec482b9157"))
        #expect(b.share == [UInt8](hex: "3ea7e0b19560d7c0b0f5734f63b955286dfa8232b5ebe63324e2d9e7433f7258"))
        let k = "80b69a8a76457ab6a4d7f887a4bf6b55a2f80ac19c333f917a05fc9887c8b40f"
        #expect(try a.secretPoint(peerShare: b.share).bytes == [UInt8](hex: k))
        #expect(try b.secretPoint(peerShare: a.share).bytes == [UInt8](hex: k))
        let isk = [UInt8](hex: "b69effbf61b51d56401c0f65601abe428de8206feaaf0e32198896dcae7b35cd"
                              + "2b38950a39dfd5d4a79164614c2984f7daa460b588c1e80c3fa2068af7900447")
        let ada = Array("ADa".utf8), adb = Array("ADb".utf8)
        #expect(try a.intermediateSessionKey(peerShare: b.share, ownData: ada, peerData: adb, initiator: true).bytes == isk)
        #expect(try b.intermediateSessionKey(peerShare: a.share, ownData: adb, peerData: ada, initiator: false).bytes == isk)
    }

    /// B.3.10 and B.3.11: scalar_mult_vfy on a valid point, and the two
    /// inputs that must abort (a non-canonical encoding, the identity).
    @Test func scalarMultVerify() throws {
        let s = "7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05"
        let p = try party(s)
        #expect(try p.secretPoint(peerShare: [UInt8](hex: "2c3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c")).bytes
                == [UInt8](hex: "7c13645fe790a468f62c39beb7388e541d8405d1ade69d1778c5fe3e7f6b600e"))
        for bad in ["2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c", String(repeating: "00", count: 32)] {
            #expect(throws: CryptoError.weakSharedSecret) { try p.secretPoint(peerShare: [UInt8](hex: bad)) }
            #expect(throws: CryptoError.weakSharedSecret) {
                try p.intermediateSessionKey(peerShare: [UInt8](hex: bad), ownData: [], peerData: [], initiator: true)
            }
        }
        #expect(throws: CryptoError.weakSharedSecret) { try p.secretPoint(peerShare: [1, 2, 3]) }
    }

    /// The draft's prepend_len vectors (A.1), and a wrong password gives another key.
    @Test func lengthPrefixAndWrongPassword() throws {
        #expect(CPace.prependLength([]) == [0])
        #expect(CPace.prependLength(Array(0..<127)) == [0x7f] + Array(0..<127))
        #expect(CPace.prependLength(Array(0..<128)) == [0x80, 0x01] + Array(0..<128))
        let a = try CPace(password: SecretBytes(hex: Self.password), channel: [], sid: [])
        let b = try CPace(password: SecretBytes(hex: "50617373776f7265"), channel: [], sid: [])
        let ka = try a.intermediateSessionKey(peerShare: b.share, ownData: [], peerData: [], initiator: true)
        let kb = try b.intermediateSessionKey(peerShare: a.share, ownData: [], peerData: [], initiator: false)
        #expect(ka.bytes != kb.bytes)
        let c = try CPace(password: SecretBytes(hex: Self.password), channel: [], sid: [])
        #expect(try c.intermediateSessionKey(peerShare: a.share, ownData: [], peerData: [], initiator: false).bytes
                == a.intermediateSessionKey(peerShare: c.share, ownData: [], peerData: [], initiator: true).bytes)
    }
}

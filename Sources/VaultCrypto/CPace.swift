// CPace, a balanced PAKE (draft-irtf-cfrg-cpace-21), the cipher suite
// CPACE-RISTR255-SHA512: group ristretto255, hash SHA-512, the
// initiator-responder transcript. Built from libsodium's
// crypto_core_ristretto255_from_hash, crypto_core_ristretto255_scalar_random,
// crypto_scalarmult_ristretto255 and crypto_hash_sha512 (Sodium.swift).
//
//   prepend_len(x)   = LEB128(len(x)) || x
//   lv_cat(a, b, …)  = prepend_len(a) || prepend_len(b) || …
//   gen_str          = lv_cat("CPaceRistretto255", PRS, zero_bytes(len_zpad), CI, sid)
//                      len_zpad = max(0, 128 - 1 - len(prepend_len(PRS)) - len(prepend_len(DSI)))
//   g                = ristretto255_from_hash(SHA-512(gen_str))     (64 bytes -> element)
//   y                = random scalar;  Y = y · g                     (32 bytes, sent)
//   K                = y · Y_peer; abort on a non-canonical encoding or the identity
//   ISK              = SHA-512(lv_cat("CPaceRistretto255_ISK", sid, K)
//                              || lv_cat(Ya, ADa) || lv_cat(Yb, ADb))   (64 bytes)
//
// The password (PRS), the generator, y, K and the ISK stay in guarded memory
// (SecretBytes); every hash over them is fed piece by piece, so no plain
// array ever holds them. The draft's appendix B.3 vectors are checked in
// Tests/VaultCryptoTests/CPaceTests.swift.

public final class CPace: Sendable {
    static let dsi = Array("CPaceRistretto255".utf8)
    static let iskDSI = Array("CPaceRistretto255_ISK".utf8)
    /// SHA-512's input block size (H.s_in_bytes).
    static let hashBlock = 128
    public static let shareLength = 32
    public static let keyLength = 64

    private let scalar: SecretBytes
    private let sid: [UInt8]
    /// This side's share Y = y · g, sent to the peer.
    public let share: [UInt8]

    /// A fresh random scalar for `password` on channel `channel` in session `sid`.
    public convenience init(password: SecretBytes, channel: [UInt8], sid: [UInt8]) throws {
        let y = try SecretBytes(count: Sodium.ristrettoBytes)
        y.withUnsafeMutableBytes { Sodium.ristrettoRandomScalar(into: $0) }
        try self.init(password: password, channel: channel, sid: sid, scalar: y)
    }

    /// The same with the scalar given (the draft's vectors fix it).
    init(password: SecretBytes, channel: [UInt8], sid: [UInt8], scalar: SecretBytes) throws {
        guard scalar.count == Sodium.ristrettoBytes else { throw CryptoError.invalidParameter(.cpaceScalarLength) }
        self.scalar = scalar
        self.sid = sid
        let g = try Self.generator(password: password, channel: channel, sid: sid)
        var y = [UInt8](repeating: 0, count: Self.shareLength)
        try scalar.withUnsafeBytes { s in try g.withUnsafeBytes { p in try y.withUnsafeMutableBytes {
            try Sodium.ristrettoScalarMult(scalar: s, point: p, into: $0)
        } } }
        share = y
    }

    /// calculate_generator: SHA-512 of the generator string, mapped to an element.
    static func generator(password: SecretBytes, channel: [UInt8], sid: [UInt8]) throws -> SecretBytes {
        let h = Sodium.SHA512()
        let dsiField = prependLength(dsi)
        let passwordHeader = leb128(password.count)
        let zpad = max(0, hashBlock - 1 - (passwordHeader.count + password.count) - dsiField.count)
        dsiField.withUnsafeBytes { h.update($0) }
        passwordHeader.withUnsafeBytes { h.update($0) }
        password.withUnsafeBytes { h.update($0) }
        for field in [[UInt8](repeating: 0, count: zpad), channel, sid] { prependLength(field).withUnsafeBytes { h.update($0) } }
        let digest = try SecretBytes(count: Sodium.SHA512.length)
        digest.withUnsafeMutableBytes { h.finish(into: $0) }
        let g = try SecretBytes(count: Sodium.ristrettoBytes)
        try digest.withUnsafeBytes { d in try g.withUnsafeMutableBytes { try Sodium.ristrettoFromHash(d, into: $0) } }
        return g
    }

    /// K = scalar_mult_vfy(y, peer share): `CryptoError.weakSharedSecret`
    /// for a share that is not a canonical element, or the identity.
    func secretPoint(peerShare: [UInt8]) throws -> SecretBytes {
        guard peerShare.count == Self.shareLength else { throw CryptoError.weakSharedSecret }
        let k = try SecretBytes(count: Sodium.ristrettoBytes)
        try scalar.withUnsafeBytes { s in try peerShare.withUnsafeBytes { p in try k.withUnsafeMutableBytes {
            try Sodium.ristrettoScalarMult(scalar: s, point: p, into: $0)
        } } }
        return k
    }

    /// The intermediate session key, initiator-responder: `initiator` says
    /// which side this is, so Ya/ADa are the initiator's share and data.
    public func intermediateSessionKey(peerShare: [UInt8], ownData: [UInt8], peerData: [UInt8], initiator: Bool) throws -> SecretBytes {
        let k = try secretPoint(peerShare: peerShare)
        let (ya, ada, yb, adb) = initiator ? (share, ownData, peerShare, peerData) : (peerShare, peerData, share, ownData)
        let h = Sodium.SHA512()
        for field in [Self.iskDSI, sid] { Self.prependLength(field).withUnsafeBytes { h.update($0) } }
        Self.leb128(k.count).withUnsafeBytes { h.update($0) }
        k.withUnsafeBytes { h.update($0) }
        for field in [ya, ada, yb, adb] { Self.prependLength(field).withUnsafeBytes { h.update($0) } }
        let isk = try SecretBytes(count: Self.keyLength)
        isk.withUnsafeMutableBytes { h.finish(into: $0) }
        return isk
    }

    /// LEB128 of a length (the draft's prepend_len prefix).
    static func leb128(_ length: Int) -> [UInt8] {
        var n = length, out: [UInt8] = []
        repeat {
            out.append(UInt8(n & 0x7f) | (n >= 0x80 ? 0x80 : 0))
            n >>= 7
        } while n > 0
        return out
    }

    static func prependLength(_ data: [UInt8]) -> [UInt8] { leb128(data.count) + data }
}

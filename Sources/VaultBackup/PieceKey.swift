import ByteLayout
import Synchronization
import VaultCrypto

/// The secret that names pieces: piece id = HMAC-SHA256(key, piece bytes)
/// (docs/FORMAT.md, "Backups: piece ids"). Keyed, never a plain hash, so
/// that equal content does not show as equal to whoever holds storage
/// (packs are sealed, but a plain hash would let anyone with a guess of
/// the content confirm it from a snapshot's references). One per host,
/// kept in its cache and sealed inside each snapshot, so that a reader
/// checks every piece it reads against its id.
public final class PieceKey: Sendable {
    public static let length = 32
    let secret: SecretBytes
    /// The key absorbed once, for every piece's id (HMACSHA256Key: HMAC()
    /// absorbed it again for each piece, half the cost of a small one's id).
    private let mac: HMACSHA256Key
    /// The ids of all-zero pieces by length, each made once: a disk image's
    /// or a sparse file's empty stretches cut into equal pieces of zeros
    /// (the chunker's hash is constant over them), and each one's HMAC
    /// cost as much as real data's (512 MiB of zeros: 0.25 s of CPU).
    /// Bounded: pieces have at most a few lengths of zeros in practice,
    /// and past `maxZeroLengths` a length is hashed as any piece.
    private let zeroIDs = Mutex<[Int: PieceID]>([:])
    static let maxZeroLengths = 64

    public init(secret: SecretBytes) throws {
        guard secret.count == Self.length else { throw BackupError.invalidCache }
        self.secret = secret
        mac = try HMACSHA256Key(secret)
    }

    public static func random() throws -> PieceKey { try PieceKey(secret: SecretBytes.random(count: length)) }

    public func id(of piece: UnsafeRawBufferPointer) throws -> PieceID {
        // (isAllZero stops at the first nonzero 4 KiB: real data pays a short look.)
        if !piece.isEmpty, piece.isAllZero { return try zeroID(piece) }
        return try hashed(piece)
    }

    /// The id of an all-zero piece, made once per length.
    private func zeroID(_ piece: UnsafeRawBufferPointer) throws -> PieceID {
        if let id = zeroIDs.withLock({ $0[piece.count] }) { return id }
        let id = try hashed(piece)
        zeroIDs.withLock { if $0.count < Self.maxZeroLengths { $0[piece.count] = id } }
        return id
    }

    private func hashed(_ piece: UnsafeRawBufferPointer) throws -> PieceID {
        try withUnsafeTemporaryAllocation(byteCount: PieceID.length, alignment: 8) { out in
            try mac.authenticate(piece, into: out)
            return PieceID(raw: UnsafeRawBufferPointer(out))
        }
    }

    public func id(of piece: [UInt8]) throws -> PieceID { try piece.withUnsafeBytes { try id(of: $0) } }

    /// One thread's lanes under this key, for `ids`.
    func lanes() -> HMACSHA256Lanes { HMACSHA256Lanes(mac) }

    /// The ids of `pieces`, in order, as `id(of:)` names them, hashed
    /// together through `lanes` (a backup worker's job: up to 256 small
    /// files' pieces, whose ids one at a time were a tenth of its CPU).
    func ids(of pieces: [UnsafeRawBufferPointer], lanes: HMACSHA256Lanes) throws -> [PieceID] {
        var ids = [PieceID?](repeating: nil, count: pieces.count)
        var hashed: [Int] = []
        for (i, p) in pieces.enumerated() {
            // All-zero pieces keep their ids made once.
            if !p.isEmpty, p.isAllZero { ids[i] = try zeroID(p) } else { hashed.append(i) }
        }
        if !hashed.isEmpty {
            let n = PieceID.length
            try withUnsafeTemporaryAllocation(byteCount: n * hashed.count, alignment: 8) { out in
                try lanes.authenticate(hashed.map { pieces[$0] }, into: out)
                for (j, i) in hashed.enumerated() { ids[i] = PieceID(raw: UnsafeRawBufferPointer(rebasing: out[(n * j)..<(n * j + n)])) }
            }
        }
        return ids.map { $0! }
    }

    /// Whether `piece` is the content `id` names, compared in constant time.
    public func verify(_ piece: UnsafeRawBufferPointer, is id: PieceID) throws -> Bool {
        constantTimeEqual(try mac.authenticate(piece), id.bytes)
    }
}

/// A piece's 32-byte id, hashable without allocating (four words).
public struct PieceID: Hashable, Sendable {
    public let a: UInt64, b: UInt64, c: UInt64, d: UInt64

    public static let length = 32

    /// From exactly 32 bytes: anything shorter or longer is a typed error,
    /// never zeros (issue 38: a short id read as zeros would name another
    /// piece than the one meant).
    public init(_ bytes: [UInt8]) throws(ByteLayoutError) {
        var r = ByteReader(bytes)
        (a, b, c, d) = (try r.u64(), try r.u64(), try r.u64(), try r.u64())
        try r.finish()
    }

    /// From a MAC's 32 bytes, read as four big-endian words.
    init(raw: UnsafeRawBufferPointer) {
        precondition(raw.count == Self.length)
        func word(_ i: Int) -> UInt64 { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self)) }
        (a, b, c, d) = (word(0), word(1), word(2), word(3))
    }

    public var bytes: [UInt8] {
        withUnsafeBytes(of: (a.bigEndian, b.bigEndian, c.bigEndian, d.bigEndian)) { Array($0) }
    }

    /// `bytes`, appended to `w` without an array of its own.
    public func encode(into w: inout ByteWriter) {
        w.u64(a); w.u64(b); w.u64(c); w.u64(d)
    }
}

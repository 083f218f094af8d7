import ByteLayout
import VaultCore
import VaultCrypto

// What the move frames carry after the handshake (docs/FORMAT.md, "Device
// move: transfer"). Each frame's plaintext is one message: a type byte, then
// a fixed shape per type. Sender to receiver:
//
//   offer     0x01 || u32be file count (1...2^20) || u64be total bytes (<= 2^50)
//   file      0x02 || u64be size || u8 path length (1...76) || path (ASCII)
//   data      0x03 || 1 to 4 MiB of the current file's bytes
//   file end  0x04 || SHA-256 of the file's bytes (32)
//   end       0x05                                   (every file sent)
//   done      0x06 || outcome (0x01 erased, 0x02 kept)   (the final frame)
//
// Receiver to sender (each is the final frame of its direction):
//
//   receipt   0x11 || SHA-256 receipt of everything received (32)
//   refused   0x12 || reason (1 byte, `MoveRefusal`)
//
// Parsing is exact: an unknown type, a wrong length, a path outside the
// vault layout, or a bound exceeded is `corruptedOrTampered`.

public enum MoveOutcome: UInt8, Sendable {
    case erased = 1
    case kept = 2
}

/// Why a receiver refused the vault it was sent.
public enum MoveRefusal: UInt8, Sendable {
    /// Its target directory already holds something.
    case targetExists = 1
    /// Not enough free space there.
    case noSpace = 2
    /// The received vault failed its check.
    case checkFailed = 3
    /// The password given there did not open the received vault.
    case wrongPassword = 4
    /// It could not write the files.
    case writeFailed = 5
}

public enum MoveMessage: Equatable, Sendable {
    case offer(files: Int, bytes: UInt64)
    case file(path: String, size: UInt64)
    /// A slice of the opened frame, so 4 MiB are not copied once more.
    case data(ArraySlice<UInt8>)
    case fileEnd(sha256: [UInt8])
    case end
    case done(MoveOutcome)
    case receipt([UInt8])
    case refused(MoveRefusal)

    public static let maxFiles = 1 << 20
    public static let maxTotalBytes: UInt64 = 1 << 50
    public static let maxData = 4 << 20
    static let maxPath = 76

    var type: UInt8 {
        switch self {
        case .offer: 0x01
        case .file: 0x02
        case .data: 0x03
        case .fileEnd: 0x04
        case .end: 0x05
        case .done: 0x06
        case .receipt: 0x11
        case .refused: 0x12
        }
    }

    public var bytes: [UInt8] {
        var w = ByteWriter([type])
        switch self {
        case .offer(let files, let total): w.u32(UInt32(files)); w.u64(total)
        case .file(let path, let size): w.u64(size); w.u8(UInt8(path.utf8.count)); w.bytes(path.utf8)
        case .data(let d): w.bytes(d)
        case .fileEnd(let h), .receipt(let h): w.bytes(h)
        case .end: break
        case .done(let o): w.u8(o.rawValue)
        case .refused(let r): w.u8(r.rawValue)
        }
        return w.bytes
    }

    /// Parses one frame's plaintext, exactly.
    public init(parsing b: [UInt8]) throws {
        var r = ByteReader(b)
        do {
            self = try Self.read(&r)
            try r.finish()
        } catch is ByteLayoutError { throw VaultError.corruptedOrTampered }
    }

    /// One message from the front of `r`: its type, then that type's shape.
    private static func read(_ r: inout ByteReader) throws -> MoveMessage {
        let bad = VaultError.corruptedOrTampered
        let type = try r.u8()
        switch type {
        case 0x01:
            let files = Int(try r.u32()), total = try r.u64()
            guard (1...Self.maxFiles).contains(files), total <= Self.maxTotalBytes else { throw bad }
            return .offer(files: files, bytes: total)
        case 0x02:
            let size = try r.u64(), path = try r.lengthPrefixed(UInt8.self)
            guard size <= Self.maxTotalBytes, let p = MoveLayout.check(path) else { throw bad }
            return .file(path: p, size: size)
        case 0x03:
            guard (1...Self.maxData).contains(r.remaining) else { throw bad }
            return .data(try r.slice(r.remaining))
        case 0x04, 0x11:
            let h = try r.bytes(32)
            return type == 0x04 ? .fileEnd(sha256: h) : .receipt(h)
        case 0x05:
            return .end
        case 0x06:
            guard let o = MoveOutcome(rawValue: try r.u8()) else { throw bad }
            return .done(o)
        case 0x12:
            guard let refusal = MoveRefusal(rawValue: try r.u8()) else { throw bad }
            return .refused(refusal)
        default:
            throw bad
        }
    }
}

/// The files a move carries, named relative to the vault directory: the
/// vault's own files and nothing else (no lock, attempts, scratch or temp
/// files, which belong to the machine).
public enum MoveLayout {
    static let fixed: Set<String> = ["vault.header", "manifest", "rekey.pending"]

    /// The path if it is one a vault holds: `vault.header`, `manifest`,
    /// `rekey.pending`, `items/<32 hex>`, `inbox/<32 hex>.item|.env`,
    /// `inbox/<32 hex>.<32 hex>.item`
    /// (lower-case hex); nil otherwise.
    public static func check(_ raw: [UInt8]) -> String? {
        guard raw.count <= MoveMessage.maxPath, raw.allSatisfy({ $0 >= 0x21 && $0 < 0x7f }) else { return nil }
        let p = String(decoding: raw, as: UTF8.self)
        if fixed.contains(p) { return p }
        func isID(_ s: Substring) -> Bool {
            s.utf8.count == 32 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
        }
        if p.hasPrefix("items/"), isID(p.dropFirst(6)) { return p }
        if p.hasPrefix("inbox/"), p.hasSuffix(".item") || p.hasSuffix(".env") {
            let name = p.dropFirst(6)
            if isID(name.prefix(while: { $0 != "." })), name.utf8.count == 37 || name.utf8.count == 36 { return p }
            // A batch drop-in's content: <batch id>.<item id>.item.
            if name.utf8.count == 70, isID(name.prefix(32)), name.dropFirst(32).first == ".", isID(name.dropFirst(33).prefix(32)),
               name.hasSuffix(".item") { return p }
        }
        return nil
    }

    /// The receipt both sides compute over the listing, in the order sent:
    /// SHA-256("vault v1 move receipt" || for each file: u8 path length ||
    /// path || u64be size || SHA-256 of its bytes).
    public static func receipt(_ files: [(path: String, size: UInt64, sha256: [UInt8])]) throws -> [UInt8] {
        let h = try SHA256()
        try h.update(Array("vault v1 move receipt".utf8))
        for f in files {
            var w = ByteWriter([UInt8(f.path.utf8.count)] + Array(f.path.utf8))
            w.u64(f.size)
            w.bytes(f.sha256)
            try h.update(w.bytes)
        }
        return try h.finish()
    }
}

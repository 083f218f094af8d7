import ByteLayout

// Who dropped a version in, when not the vault's owner (docs/FORMAT.md,
// "Manifest", version 4 records):
//
//   dropper = 0x00                                      the owner's own
//           | 0x01 || uid u32be || u8(n) || name (n)     another user's
//
// n is 0…32; the name is the user's login name when absorbed, of the
// characters A-Z a-z 0-9 . _ - (and a final $), or empty (none, or one
// that is not such a name: then only the uid is shown).

/// The Unix user, other than the vault's owner, whose files in a shared
/// inbox held a drop-in. Seen by the owner's process when it absorbs (the
/// inode's owner, which the dropper cannot forge); never taken from the
/// sealed envelope, which anyone can write.
public struct Dropper: Sendable, Equatable {
    public static let maxNameLength = 32

    public let uid: UInt32
    /// The login name when absorbed; empty if it had none that fits.
    public let name: String

    public init(uid: UInt32, name: String?) {
        self.uid = uid
        self.name = name.flatMap { Self.isPlainName(Array($0.utf8)) ? $0 : nil } ?? ""
    }

    /// "ncshare", or "uid 1001" when there is no name.
    public var display: String { name.isEmpty ? "uid \(uid)" : name }

    static func isPlainName(_ b: [UInt8]) -> Bool {
        guard b.count <= maxNameLength else { return false }
        return b.enumerated().allSatisfy { i, c in
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
            case UInt8(ascii: "$"): i == b.count - 1
            default: false
            }
        }
    }

    /// The encoded length of `dropper` (nil: the owner's own).
    static func encodedLength(_ dropper: Dropper?) -> Int { dropper.map { 6 + $0.name.utf8.count } ?? 1 }

    static func encode(_ dropper: Dropper?, into out: inout [UInt8]) {
        guard let dropper else { out.append(0); return }
        out.append(1)
        out += ByteWriter.bigEndian(dropper.uid)
        out.append(UInt8(dropper.name.utf8.count))
        out += dropper.name.utf8
    }

    /// Exact shape, or `corruptedOrTampered`.
    static func decode(_ r: inout RawByteReader) throws -> Dropper? {
        do {
            switch try r.u8() {
            case 0: return nil
            case 1:
                let uid = try r.u32()
                let name = try r.bytes(r.length(UInt8.self, max: maxNameLength))
                guard isPlainName(name) else { throw VaultError.corruptedOrTampered }
                return Dropper(uid: uid, name: String(decoding: name, as: UTF8.self))
            default: throw VaultError.corruptedOrTampered
            }
        } catch { throw VaultError.corruptedOrTampered }
    }
}

import ByteLayout
import VaultCrypto

// Item header (docs/FORMAT.md, "Item content"), 36 bytes:
//
//   magic "VAULTITM" (8) || version 0x01 (1) || suite 0x01 (1) || flags u16be (2)
//   || item id (16) || nonce prefix (8)
//
// The whole header is the first part of every chunk's associated data, so a
// flipped header bit fails every chunk. The reader accepts exactly this shape.

/// What the content stream holds before encryption; authenticated with it.
public struct ItemFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// The content is an xz (liblzma) stream.
    public static let xz = ItemFlags(rawValue: 1 << 0)
    /// The content is a pax archive of a folder.
    public static let archive = ItemFlags(rawValue: 1 << 1)
    /// The content is a sequence of zstd frames.
    public static let zstd = ItemFlags(rawValue: 1 << 2)
    public static let known: ItemFlags = [.xz, .archive, .zstd]
    /// The codec bits: at most one may be set.
    public static let codecs: ItemFlags = [.xz, .zstd]

    /// Whether the content is compressed (by either codec).
    public var isCompressed: Bool { !isDisjoint(with: Self.codecs) }

    /// Known bits, and at most one codec.
    var isValid: Bool { Self.known.contains(self) && intersection(Self.codecs) != Self.codecs }
}

public struct ItemHeader: Equatable, Sendable {
    public static let magic: [UInt8] = Array("VAULTITM".utf8)
    public static let version: UInt8 = 1
    /// Suite 1: AES-256-GCM, 1 MiB chunks, Padmé padding with a u64 length trailer.
    public static let suite: UInt8 = 1
    public static let length = 36
    public static let itemIDLength = 16
    public static let noncePrefixLength = 8

    public let flags: ItemFlags
    public let itemID: [UInt8]
    public let noncePrefix: [UInt8]

    public init(flags: ItemFlags, itemID: [UInt8], noncePrefix: [UInt8]) throws {
        guard flags.isValid, itemID.count == Self.itemIDLength,
              noncePrefix.count == Self.noncePrefixLength else {
            throw VaultError.misuse(.itemHeaderFields)
        }
        self.flags = flags
        self.itemID = itemID
        self.noncePrefix = noncePrefix
    }

    /// A header with a fresh random item id and nonce prefix.
    public static func random(flags: ItemFlags) throws -> ItemHeader {
        try ItemHeader(flags: flags, itemID: SecureRandom.bytes(itemIDLength),
                        noncePrefix: SecureRandom.bytes(noncePrefixLength))
    }

    public var bytes: [UInt8] {
        var w = ByteWriter(Self.magic, capacity: Self.length)
        w.u8(Self.version)
        w.u8(Self.suite)
        w.u16(flags.rawValue)
        w.bytes(itemID)
        w.bytes(noncePrefix)
        return w.bytes
    }

    /// Parses exactly `length` bytes. Any deviation (magic, version, suite,
    /// both codecs) is `corruptedOrTampered`: item files are written only by
    /// this tool, so an unexpected header is damage. Unknown flag bits are
    /// `newerItemFormat`: a later version's codec or feature, or damage; the
    /// message says both, and nothing is decoded either way.
    public init(parsing b: some Collection<UInt8>) throws {
        var r = ByteReader(Array(b))
        let flags: ItemFlags, itemID: [UInt8], noncePrefix: [UInt8]
        do {
            guard r.remaining == Self.length else { throw VaultError.corruptedOrTampered }
            try r.expect(Self.magic + [Self.version, Self.suite])
            flags = ItemFlags(rawValue: try r.u16())
            (itemID, noncePrefix) = (try r.bytes(Self.itemIDLength), try r.bytes(Self.noncePrefixLength))
            try r.finish()
        } catch is ByteLayoutError { throw VaultError.corruptedOrTampered }
        guard ItemFlags.known.contains(flags) else { throw VaultError.newerItemFormat(item: "", flags: flags.rawValue) }
        guard flags.isValid else { throw VaultError.corruptedOrTampered }
        try self.init(flags: flags, itemID: itemID, noncePrefix: noncePrefix)
    }
}

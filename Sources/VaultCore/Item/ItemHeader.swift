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
    public static let compressed = ItemFlags(rawValue: 1 << 0)
    /// The content is a pax archive of a folder.
    public static let archive = ItemFlags(rawValue: 1 << 1)
    public static let known: ItemFlags = [.compressed, .archive]
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
        guard ItemFlags.known.contains(flags), itemID.count == Self.itemIDLength,
              noncePrefix.count == Self.noncePrefixLength else {
            throw VaultError.invalidArgument("item header fields out of shape")
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
        var out = Self.magic
        out.append(Self.version)
        out.append(Self.suite)
        out.append(UInt8(flags.rawValue >> 8))
        out.append(UInt8(flags.rawValue & 0xff))
        out += itemID
        out += noncePrefix
        return out
    }

    /// Parses exactly `length` bytes. Any deviation (magic, version, suite,
    /// unknown flag bits) is `corruptedOrTampered`: item files are written only
    /// by this tool, so an unexpected header is damage, not a newer format.
    public init(parsing b: some Collection<UInt8>) throws {
        let b = Array(b)
        guard b.count == Self.length, Array(b[0..<8]) == Self.magic,
              b[8] == Self.version, b[9] == Self.suite else { throw VaultError.corruptedOrTampered }
        let flags = ItemFlags(rawValue: UInt16(b[10]) << 8 | UInt16(b[11]))
        guard ItemFlags.known.contains(flags) else { throw VaultError.corruptedOrTampered }
        try self.init(flags: flags, itemID: Array(b[12..<28]), noncePrefix: Array(b[28..<36]))
    }
}

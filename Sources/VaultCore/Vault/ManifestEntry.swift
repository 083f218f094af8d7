import Foundation
import VaultCrypto

// One item's record (docs/FORMAT.md, "Manifest entry"); the same encoding is
// the payload of a drop-in envelope:
//
//   item id (16) || file key (32) || kind u8 || origin u8 || mode u16be
//   || size u64be || file count u64be || added i64be || modified i64be
//   || name length u16be || name (UTF-8)
//
// Fixed part: 86 bytes. Names are 1...1024 bytes of UTF-8 without control
// characters or '/', and not "." or "..".

public enum ItemKind: UInt8, Sendable {
    case file = 0, folder = 1
    /// `vault backup`'s items (BackupItems.swift): pieces, and a snapshot.
    /// Stored, copied and checked like files; never listed as items.
    case pack = 2, snapshot = 3
}

public enum ItemOrigin: UInt8, Sendable {
    /// Written while the vault was unlocked (edited with `open`, or re-encrypted by `rekey`).
    case unlocked = 0
    /// Dropped in with `vault add`, without the password.
    case droppedIn = 1
}

public struct ManifestEntry: Sendable {
    public static let fixedLength = 86
    public static let maxNameLength = 1024

    public var itemID: [UInt8]
    public var fileKey: FileKey
    public var kind: ItemKind
    public var origin: ItemOrigin
    public var mode: UInt16
    /// Content bytes (before compression); for a folder, the sum of its files.
    public var size: UInt64
    /// 1 for a file; the number of regular files for a folder.
    public var fileCount: UInt64
    /// Unix seconds when the item entered the vault.
    public var added: Int64
    /// Unix seconds of the source's last modification.
    public var modified: Int64
    public var name: String
    /// Which version of `name` this is (1, 2, …). Not part of the entry
    /// encoding: a version 3 manifest stores it before each entry, and a
    /// drop-in's number is given when it is absorbed.
    public var version: UInt32 = 1

    public init(itemID: [UInt8], fileKey: FileKey, kind: ItemKind, origin: ItemOrigin, mode: UInt16,
                size: UInt64, fileCount: UInt64, added: Int64, modified: Int64, name: String) throws {
        try Self.checkName(name)
        guard itemID.count == ItemHeader.itemIDLength, mode <= 0o7777 else {
            throw VaultError.invalidArgument("manifest entry fields out of range")
        }
        (self.itemID, self.fileKey, self.kind, self.origin) = (itemID, fileKey, kind, origin)
        (self.mode, self.size, self.fileCount, self.added, self.modified, self.name) =
            (mode, size, fileCount, added, modified, name)
    }

    /// The blob's file name under items/ (and inbox/): the item id in hex.
    public var blobName: String { Hex.encode(itemID) }

    public static func checkName(_ name: String) throws {
        let utf8 = Array(name.utf8)
        guard !utf8.isEmpty, utf8.count <= maxNameLength, name != ".", name != "..",
              !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f || $0 == "/" }) else {
            throw VaultError.invalidName(name)
        }
    }

    var encodedLength: Int { Self.fixedLength + name.utf8.count }

    /// Appends the encoding to `out`. The file key is copied in; callers seal
    /// and then zero `out`.
    func encode(into out: inout [UInt8]) {
        out += itemID
        fileKey.withUnsafeBytes { out += $0 }
        out += [kind.rawValue, origin.rawValue, UInt8(mode >> 8), UInt8(mode & 0xff)]
        for v in [size, fileCount, UInt64(bitPattern: added), UInt64(bitPattern: modified)] {
            out += withUnsafeBytes(of: v.bigEndian, Array.init)
        }
        let n = Array(name.utf8)
        out += [UInt8(n.count >> 8), UInt8(n.count & 0xff)] + n
    }

    /// Decodes one entry at `offset`, advancing it. Exact shape or
    /// `corruptedOrTampered`; the file key is copied into guarded memory.
    static func decode(_ b: UnsafeRawBufferPointer, offset: inout Int) throws -> ManifestEntry {
        guard b.count - offset >= fixedLength else { throw VaultError.corruptedOrTampered }
        let o = offset
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(b[o + at + $1]) } }
        let nameLength = Int(b[o + 84]) << 8 | Int(b[o + 85])
        guard let kind = ItemKind(rawValue: b[o + 48]), let origin = ItemOrigin(rawValue: b[o + 49]),
              nameLength >= 1, nameLength <= maxNameLength, b.count - o - fixedLength >= nameLength,
              let name = String(validating: UnsafeRawBufferPointer(rebasing: b[(o + 86)..<(o + 86 + nameLength)]),
                                as: UTF8.self) else {
            throw VaultError.corruptedOrTampered
        }
        let key = try FileKey(copying: UnsafeRawBufferPointer(rebasing: b[(o + 16)..<(o + 48)]))
        do {
            let e = try ManifestEntry(itemID: Array(b[o..<(o + 16)]), fileKey: key, kind: kind, origin: origin,
                                      mode: UInt16(b[o + 50]) << 8 | UInt16(b[o + 51]),
                                      size: u64(52), fileCount: u64(60),
                                      added: Int64(bitPattern: u64(68)), modified: Int64(bitPattern: u64(76)),
                                      name: name)
            offset = o + fixedLength + nameLength
            return e
        } catch {
            throw VaultError.corruptedOrTampered
        }
    }
}

import ByteLayout
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
    /// A pack that prune rewrote with only its live pieces, and the table
    /// that still places them by their old offsets (BackupItems.swift).
    /// Written only with the password; never taken in from the inbox.
    case repack = 4
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
    /// The other user of this machine whose drop-in this version was (a
    /// shared inbox); nil for the owner's own. Not part of the entry
    /// encoding either: a version 4 manifest stores it in the record, from
    /// what absorb saw, never from the envelope.
    public var droppedBy: Dropper?

    public init(itemID: [UInt8], fileKey: FileKey, kind: ItemKind, origin: ItemOrigin, mode: UInt16,
                size: UInt64, fileCount: UInt64, added: Int64, modified: Int64, name: String) throws {
        try Self.checkName(name)
        guard itemID.count == ItemHeader.itemIDLength, mode <= 0o7777 else {
            throw VaultError.misuse(.entryFieldsOutOfRange)
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
        let n = Array(name.utf8)
        var w = ByteWriter(capacity: Self.fixedLength - ItemHeader.itemIDLength - FileKey.length + n.count)
        w.u8(kind.rawValue)
        w.u8(origin.rawValue)
        w.u16(mode)
        w.u64(size)
        w.u64(fileCount)
        w.i64(added)
        w.i64(modified)
        w.u16(UInt16(n.count))
        w.bytes(n)
        out += w.bytes
    }

    /// Decodes `b`, which holds one entry and nothing after it (a drop-in's payload).
    static func decode(exactly b: UnsafeRawBufferPointer) throws -> ManifestEntry {
        var r = RawByteReader(b)
        let e = try decode(&r)
        guard r.isAtEnd else { throw VaultError.corruptedOrTampered }
        return e
    }

    /// Decodes the entry at `r`, advancing it past the entry. Exact shape or
    /// `corruptedOrTampered`; the file key is read in place and copied only
    /// into guarded memory, once every other field is valid.
    static func decode(_ r: inout RawByteReader) throws -> ManifestEntry {
        let itemID: [UInt8], key: UnsafeRawBufferPointer, kind: ItemKind, origin: ItemOrigin, name: String
        let mode: UInt16, size: UInt64, fileCount: UInt64, added: Int64, modified: Int64
        do {
            itemID = try r.bytes(ItemHeader.itemIDLength)
            key = try r.slice(FileKey.length)
            guard let k = ItemKind(rawValue: try r.u8()), let o = ItemOrigin(rawValue: try r.u8()) else {
                throw VaultError.corruptedOrTampered
            }
            (kind, origin) = (k, o)
            (mode, size, fileCount, added, modified) = (try r.u16(), try r.u64(), try r.u64(), try r.i64(), try r.i64())
            let nameLength = try r.length(UInt16.self, max: maxNameLength)
            guard nameLength >= 1, let n = String(validating: try r.slice(nameLength), as: UTF8.self) else {
                throw VaultError.corruptedOrTampered
            }
            name = n
        } catch { throw VaultError.corruptedOrTampered }
        let fileKey = try FileKey(copying: key)
        do {
            return try ManifestEntry(itemID: itemID, fileKey: fileKey, kind: kind, origin: origin, mode: mode, size: size,
                                     fileCount: fileCount, added: added, modified: modified, name: name)
        } catch {
            throw VaultError.corruptedOrTampered
        }
    }
}

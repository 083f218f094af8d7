import ByteLayout

// One directory of a snapshot (docs/FORMAT.md, "Backups: trees"), stored as
// a piece like file content, so an unchanged directory has the same id and
// costs nothing:
//
//   "VAULTTR2" || entry count u32be || entry × count     (entries in strictly increasing name-byte order)
//   entry = name length u16be || name || type u8 (1 file, 2 directory, 3 symlink) || flags u8
//           || mode u16be || uid u32be || gid u32be
//           || mtime seconds i64be || mtime nanoseconds u32be || ctime seconds i64be || ctime nanoseconds u32be
//           || size u64be || by type:
//        file:      hard-link group u32be (0: none) || piece count u32be || piece reference × count
//        directory: its tree's piece reference
//        symlink:   target length u16be || target
//
// flags: bit 0, the file changed while it was read. Names are 1...255 bytes
// without '/' or NUL, never "." or "..". A tree is at most maxLength bytes.
// Trees of format 1 ("VAULTTR1", from before pieces were compressed) are
// the same with 60-byte references (PieceRef); they are read, never written.

public struct TreeEntry: Sendable, Equatable {
    public enum Kind: UInt8, Sendable { case file = 1, directory = 2, symlink = 3 }
    public static let changedWhileRead: UInt8 = 1

    public var name: [UInt8]
    public var kind: Kind
    public var flags: UInt8 = 0
    public var mode: UInt16
    public var user: UInt32, group: UInt32
    public var modified: Int64, modifiedNanoseconds: UInt32
    public var changed: Int64, changedNanoseconds: UInt32
    public var size: UInt64
    public var linkGroup: UInt32 = 0
    public var pieces: [PieceRef] = []
    public var subtree: PieceRef?
    public var target: [UInt8] = []
    /// Extended attributes (ACLs, capabilities, SELinux labels, user.*),
    /// in name order; stored only in a "VAULTTR3" tree.
    public var attributes: [ExtendedAttribute] = []

    public init(name: [UInt8], kind: Kind, mode: UInt16, user: UInt32, group: UInt32, modified: Int64,
                modifiedNanoseconds: UInt32, changed: Int64, changedNanoseconds: UInt32, size: UInt64) {
        (self.name, self.kind, self.mode, self.user, self.group) = (name, kind, mode, user, group)
        (self.modified, self.modifiedNanoseconds, self.changed, self.changedNanoseconds, self.size) =
            (modified, modifiedNanoseconds, changed, changedNanoseconds, size)
    }

    /// A name restore can create in a directory: not empty, no '/' or NUL, not "." or "..".
    public static func isSafeName(_ name: [UInt8]) -> Bool {
        !name.isEmpty && name.count <= 255 && name != [0x2e] && name != [0x2e, 0x2e] && !name.contains(0x2f) && !name.contains(0)
    }
}

/// One extended attribute of an entry: a name such as "user.comment" or
/// "system.posix_acl_access" (1 to 255 bytes, no NUL) and its value (at
/// most 64 KiB, Linux's bound).
public struct ExtendedAttribute: Sendable, Equatable {
    public var name: [UInt8], value: [UInt8]
    public init(name: [UInt8], value: [UInt8]) { (self.name, self.value) = (name, value) }
    public static let maxValue = 65_536
    /// At most this many per entry: Linux lists at most 64 KiB of names.
    public static let maxCount = 4096
}

public enum Tree {
    /// The format written when an entry of the tree has extended attributes
    /// ("VAULTTR2" plus each entry's attributes); "VAULTTR2" otherwise.
    public static let attributesMagic = Array("VAULTTR3".utf8)
    public static let magic = Array("VAULTTR2".utf8)
    public static let legacyMagic = Array("VAULTTR1".utf8)
    /// 64 MiB: about 600,000 entries of a directory, or one file of 1,000,000 pieces.
    public static let maxLength = 64 << 20
    /// The fixed part of an entry, without its name and type-specific tail.
    static let entryFixedLength = 2 + 1 + 1 + 2 + 4 + 4 + 8 + 4 + 8 + 4 + 8

    public static func encode(_ entries: [TreeEntry]) -> [UInt8] {
        let withAttributes = entries.contains { !$0.attributes.isEmpty }
        var w = ByteWriter(withAttributes ? attributesMagic : magic)
        w.u32(UInt32(entries.count))
        for e in entries {
            w.u16(UInt16(e.name.count))
            w.bytes(e.name)
            w.u8(e.kind.rawValue)
            w.u8(e.flags)
            w.u16(e.mode)
            w.u32(e.user)
            w.u32(e.group)
            w.i64(e.modified)
            w.u32(e.modifiedNanoseconds)
            w.i64(e.changed)
            w.u32(e.changedNanoseconds)
            w.u64(e.size)
            switch e.kind {
            case .file:
                w.u32(e.linkGroup)
                w.u32(UInt32(e.pieces.count))
                for p in e.pieces { p.encode(into: &w) }
            case .directory:
                e.subtree?.encode(into: &w)
            case .symlink:
                w.u16(UInt16(e.target.count))
                w.bytes(e.target)
            }
            if withAttributes {
                w.u16(UInt16(e.attributes.count))
                for a in e.attributes {
                    w.u8(UInt8(a.name.count))
                    w.bytes(a.name)
                    w.u32(UInt32(a.value.count))
                    w.bytes(a.value)
                }
            }
        }
        return w.bytes
    }

    /// Exact shape or `ByteLayoutError`/`nil`: counts are checked against
    /// the bytes left before anything is allocated for them.
    public static func decode(_ bytes: [UInt8]) -> [TreeEntry]? {
        guard bytes.count <= maxLength else { return nil }
        var r = ByteReader(bytes)
        do {
            let legacy = bytes.starts(with: legacyMagic), withAttributes = bytes.starts(with: attributesMagic)
            try r.expect(legacy ? legacyMagic : withAttributes ? attributesMagic : magic)
            let refLength = legacy ? PieceRef.legacyLength : PieceRef.length
            let count = Int(try r.u32())
            guard count <= r.remaining / (entryFixedLength + 1) else { return nil }
            var entries: [TreeEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let name = try r.bytes(Int(try r.u16()))
                guard TreeEntry.isSafeName(name), let kind = TreeEntry.Kind(rawValue: try r.u8()) else { return nil }
                if let last = entries.last, !last.name.lexicographicallyPrecedes(name) { return nil }
                let flags = try r.u8()
                let mode = try r.u16()
                let user = try r.u32(), group = try r.u32()
                let mtime = try r.i64(), mtimeNs = try r.u32(), ctime = try r.i64(), ctimeNs = try r.u32()
                guard mode <= 0o7777, mtimeNs < 1_000_000_000, ctimeNs < 1_000_000_000 else { return nil }
                var e = TreeEntry(name: name, kind: kind, mode: mode, user: user, group: group, modified: mtime,
                                  modifiedNanoseconds: mtimeNs, changed: ctime, changedNanoseconds: ctimeNs, size: try r.u64())
                e.flags = flags
                switch kind {
                case .file:
                    e.linkGroup = try r.u32()
                    let n = Int(try r.u32())
                    guard n <= r.remaining / refLength else { return nil }
                    e.pieces = try (0..<n).map { _ throws(ByteLayoutError) in try PieceRef.decode(&r, legacy: legacy) }
                    var total: UInt64 = 0
                    for p in e.pieces {
                        let (sum, overflow) = total.addingReportingOverflow(UInt64(p.count))
                        guard !overflow else { return nil }
                        total = sum
                    }
                    guard total == e.size else { return nil }
                case .directory:
                    e.subtree = try PieceRef.decode(&r, legacy: legacy)
                case .symlink:
                    e.target = try r.bytes(Int(try r.u16()))
                    guard !e.target.isEmpty, !e.target.contains(0) else { return nil }
                }
                if withAttributes {
                    let n = Int(try r.u16())
                    guard n <= ExtendedAttribute.maxCount, n <= r.remaining / 6 else { return nil }
                    for _ in 0..<n {
                        let name = try r.bytes(Int(try r.u8()))
                        let length = Int(try r.u32())
                        guard !name.isEmpty, !name.contains(0), length <= ExtendedAttribute.maxValue else { return nil }
                        if let last = e.attributes.last, !last.name.lexicographicallyPrecedes(name) { return nil }
                        e.attributes.append(ExtendedAttribute(name: name, value: try r.bytes(length)))
                    }
                }
                entries.append(e)
            }
            try r.finish()
            // One shape per content: a tree with no attributes is "VAULTTR2".
            if withAttributes && entries.allSatisfy({ $0.attributes.isEmpty }) { return nil }
            return entries
        } catch {
            return nil
        }
    }
}

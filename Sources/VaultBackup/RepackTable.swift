import ByteLayout
import VaultCore

/// A pack that prune rewrote (docs/FORMAT.md, "Backups: repacking"): the
/// content of an item of kind repack, named "repack-<hex pack id>":
///
///   "VAULTRP1" || pack id (16) || range count u32be
///   || (old offset u64be || length u64be) × count || the ranges' bytes, in table order
///
/// Each range is bytes of the original pack's content that a snapshot
/// still needs; trees and snapshots are never rewritten, so their
/// references keep naming the original pack and offset, and a reader maps
/// them through this table. Ranges are in increasing order of old offset,
/// at least 1 byte, neither overlapping nor touching (the writer joins
/// neighbours), and the content is exactly the table and those bytes.
public struct RepackTable: Sendable {
    public static let magic = Array("VAULTRP1".utf8)
    static let fixedLength = 8 + 16 + 4
    static let rangeLength = 16
    /// 4 Mi ranges (64 MiB of table) is far beyond what a 32 MiB pack of
    /// pieces makes, and caps what a reader holds.
    public static let maxRanges = 1 << 22

    public struct Range: Sendable, Equatable {
        public let old: UInt64
        public let length: UInt64
        /// Where the range's bytes start in the repack's content.
        public let new: UInt64
    }

    public let pack: [UInt8]
    public let ranges: [Range]

    /// The header and table for these ranges of `pack` (old offset, length;
    /// sorted, disjoint, not touching: `joined` makes them so).
    public static func encode(pack: [UInt8], ranges: [(old: UInt64, length: UInt64)]) -> [UInt8] {
        var w = ByteWriter()
        w.bytes(magic)
        w.bytes(pack)
        w.u32(UInt32(ranges.count))
        for r in ranges {
            w.u64(r.old)
            w.u64(r.length)
        }
        return w.bytes
    }

    /// Byte ranges (offset, length) joined where they overlap or touch, in
    /// order; empty ones dropped.
    public static func joined(_ spans: [(old: UInt64, length: UInt64)]) -> [(old: UInt64, length: UInt64)] {
        var out: [(old: UInt64, length: UInt64)] = []
        for s in spans.sorted(by: { $0.old < $1.old }) where s.length > 0 {
            if let last = out.last, s.old <= last.old + last.length {
                out[out.count - 1].length = max(last.length, s.old + s.length - last.old)
            } else {
                out.append(s)
            }
        }
        return out
    }

    /// Reads and checks the table at the start of a repack of `pack` (the
    /// id its name gives it) of `contentLength` bytes: exact shape, or nil.
    public static func read(from content: RandomAccessContent, pack expected: [UInt8], contentLength: UInt64) throws -> RepackTable? {
        try read(pack: expected, contentLength: contentLength) { try content.read(at: $0, into: $1) }
    }

    /// The same, from any reader of the repack's content at an offset.
    public static func read(pack expected: [UInt8], contentLength: UInt64,
                            _ read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int) throws -> RepackTable? {
        guard contentLength >= UInt64(fixedLength) else { return nil }
        var head = [UInt8](repeating: 0, count: fixedLength)
        guard try head.withUnsafeMutableBytes({ try read(0, $0) }) == fixedLength else { return nil }
        var r = ByteReader(head)
        guard (try? r.expect(magic)) != nil, let pack = try? r.bytes(16), pack == expected, let count = try? r.u32(),
              count >= 1, Int(count) <= maxRanges else { return nil }
        let tableEnd = UInt64(fixedLength) + UInt64(count) * UInt64(rangeLength)
        guard tableEnd <= contentLength else { return nil }
        var table = [UInt8](repeating: 0, count: Int(count) * rangeLength)
        guard try table.withUnsafeMutableBytes({ try read(UInt64(fixedLength), $0) }) == table.count else { return nil }
        return parse(pack: pack, table: table, tableEnd: tableEnd, contentLength: contentLength)
    }

    static func parse(pack: [UInt8], table: [UInt8], tableEnd: UInt64, contentLength: UInt64) -> RepackTable? {
        var r = ByteReader(table)
        var ranges: [Range] = []
        ranges.reserveCapacity(table.count / rangeLength)
        var new = tableEnd
        var previousEnd: UInt64?
        while r.remaining > 0 {
            guard let old = try? r.u64(), let length = try? r.u64(), length >= 1 else { return nil }
            let (end, o1) = old.addingReportingOverflow(length)
            let (next, o2) = new.addingReportingOverflow(length)
            guard !o1, !o2, previousEnd.map({ $0 < old }) ?? true else { return nil }
            ranges.append(Range(old: old, length: length, new: new))
            (previousEnd, new) = (end, next)
        }
        guard new == contentLength else { return nil }
        return RepackTable(pack: pack, ranges: ranges)
    }

    /// Where `stored` bytes at `offset` of the original pack are in the
    /// repack's content; nil when no one range holds them all.
    public func place(_ offset: UInt64, _ stored: UInt64) -> UInt64? {
        var (lo, hi) = (0, ranges.count)
        while lo < hi {   // the first range that starts after `offset`
            let mid = (lo + hi) / 2
            if ranges[mid].old <= offset { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let r = ranges[lo - 1], into = offset - r.old
        guard into <= r.length, stored <= r.length - into else { return nil }
        return r.new + into
    }
}

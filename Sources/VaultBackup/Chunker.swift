import ByteLayout
import VaultCrypto

// Content-defined chunking (docs/FORMAT.md, "Backups: chunking"): a gear
// hash, as in FastCDC, with FastCDC's normalized chunking (a harder mask
// before the average size, an easier one after), so pieces cluster around
// 1 MiB and a change shifts only the boundaries near it.
//
//   gear[i] = the first 8 bytes, big-endian, of SHA-256("vault gear v1" || i)   (i = 0...255, one byte)
//   h = 0 at a piece's start; for each byte b from offset minSize on: h = (h << 1) + gear[b] (mod 2^64)
//   cut after the byte at which (before averageSize) h & hardMask == 0, or
//   (from averageSize on) h & easyMask == 0; at maxSize at the latest
//
// The masks test the top bits of h: bit k of h depends on the last k+1
// bytes only, so the top bits see the whole 64-byte window. The table is
// fixed (not keyed): boundaries leak nothing to the storage, which sees
// only whole sealed packs.

public struct Chunker: Sendable {
    public static let minSize = 256 << 10
    public static let averageSize = 1 << 20
    public static let maxSize = 4 << 20
    /// 22 top bits: a cut every 4 MiB on average, before averageSize.
    public static let hardMask: UInt64 = ~UInt64(0) << (64 - 22)
    /// 18 top bits: every 256 KiB on average, from averageSize on.
    public static let easyMask: UInt64 = ~UInt64(0) << (64 - 18)

    public static let gear: [UInt64] = (0...255).map { i in
        let digest = (try? SHA256.hash(Array("vault gear v1".utf8) + [UInt8(i)])) ?? []
        var r = ByteReader(digest)
        return (try? r.u64()) ?? 0
    }

    /// The length of the first piece of `data`. All of `data` when it is
    /// shorter than the smallest piece or no boundary is found before its
    /// end (`final` is then the caller's: more data may follow, unless
    /// `data.count >= maxSize`).
    public static func cut(_ data: UnsafeRawBufferPointer) -> Int {
        let n = data.count
        if n <= minSize { return n }
        let normal = min(n, averageSize), end = min(n, maxSize)
        return gear.withUnsafeBufferPointer { g in
            let p = data.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var h: UInt64 = 0
            var i = minSize
            while i < normal {
                h = (h &<< 1) &+ g[Int(p[i])]
                if h & hardMask == 0 { return i + 1 }
                i += 1
            }
            while i < end {
                h = (h &<< 1) &+ g[Int(p[i])]
                if h & easyMask == 0 { return i + 1 }
                i += 1
            }
            return end
        }
    }
}

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

    /// gear[i] as the formula above gives it, written out: computed at
    /// first use, a failure of SHA-256 could only have been swallowed (a
    /// static cannot throw) into a table of zeros, which would cut every
    /// piece at the same place (issue 38). ChunkerTests derives it again
    /// from the formula and compares.
    public static let gear: [UInt64] = [
        0x1339bb293da4eabd, 0x114ec4198f033524, 0xe3e7f0fbb95700c5, 0x745a86dec81d4768,
        0x902887d3dc487329, 0x178aafd432d6cb8f, 0x3dc02497201580cf, 0x3ea59b6cc67b28d7,
        0x6bb7f9ab59224997, 0x19eb48d6e06ef3d5, 0x53cba8f0196522aa, 0xa6ae2bed13681352,
        0x3c7f2231f6d28470, 0x0260c60ef09e0d8b, 0x352cd5a98b1b7b9d, 0x59af8425d4c9114b,
        0x1124b88bbd761540, 0x72c34be362c1f884, 0xed1ca350374e53f4, 0xe47683bded105f3f,
        0xce1bf498fc0804f5, 0x02609087787c0f5d, 0xcc40714337378517, 0x80f3493bb53626b0,
        0x985c5e774497e4aa, 0x1dc265338c4321e8, 0x1cf9c8d6308380b9, 0x0c1fd82bfa13580e,
        0x4e5df1234d73653b, 0xbfd0457b4bdeceaf, 0x07087451aea96e1f, 0xb53e1bba0aef71e1,
        0x34fce46e55b15ef1, 0x15bbfa9d1f3c6625, 0x2eed45f02bd1a71a, 0x252c58c4ee70d123,
        0x5427027005ec5121, 0xeafa787c7e4c3724, 0x1cd90c5eb2e6e3b0, 0x04bb43a84df379d4,
        0x9fc494f6d7495f73, 0x65cce1d3688a93c4, 0xb10cdce36dfa3e55, 0xe9df37b946637d90,
        0x886057e8ce7f38c7, 0x6efd4093bb06e78f, 0xcc8f7675238c6c09, 0x1fd90e30867a56dc,
        0xe049646cbbddb74e, 0x17f06aae3c0d4e36, 0x66a158536d8e0c00, 0xf503028247e619a0,
        0x64c81a0fa6dfe2da, 0x4b177f9c8b7aa058, 0x799c8e8fe23e6dcd, 0x273d3c36b65a1413,
        0x54a2a62f78d8b948, 0x0f75ddbd2950bbb9, 0xf78e87cb58ac215f, 0x60d577a5cf9adf06,
        0xacb805e9464c81db, 0x76516551d5e1e279, 0x7fd9288b026bf3c4, 0xffcbfa06acc40816,
        0xf859eb51290364c3, 0xa904e7318a240b22, 0xdaff744cc87cb3b7, 0x7c0b187a7e7f7fb0,
        0xd1bb1b617aafdf67, 0x522a36cff94282f0, 0x6d17b1bd3658d2cd, 0x5f403df6b38e4ab8,
        0xbff0100d8f90a4f3, 0xa8739d58f23efe6c, 0x80f7d721374fcae5, 0xc2450c5508d80b46,
        0x7e53f0e82243da58, 0x77c7ec37ee74733b, 0xf4a272fd0fb8b5bb, 0x080d1e08786fc596,
        0x183fc3697322ef77, 0x8922cccb17b509c6, 0xa6e743efd11b99e1, 0xd0b976c6f00628d9,
        0xd3b2484c00e811a4, 0x83107f9510b871ac, 0x267f6e82af346f3d, 0x2c073ec4bda20e75,
        0x2938f715fd887841, 0x552beaf746d09a13, 0x97f0d9aa6e41d389, 0x6c0b9333ae0408be,
        0x6c62fc3d7d5f440d, 0xb47ff956055a8517, 0x76a80f56326a8946, 0xbc598bd1621ef218,
        0xded963c4822c7d5a, 0xca32e5f0bbec6f37, 0x620851b2e9a6132d, 0x6a2d2274b73fcf27,
        0x3fde46308b2aa1c6, 0x5cd69ff6496f6204, 0xdde33a1b917dae2d, 0x24efb3bd077a82be,
        0x6cdb30f2f1866b73, 0x99a548cf900d81c3, 0xc5a06973d87e4309, 0x3de4508068447500,
        0x7a9c179ee9f8faa9, 0x4c089346b8bcfa44, 0x1504ea1aa47de455, 0xabac6bdbccd928a3,
        0xf6da05edc990878e, 0x8ca06af9d41850c0, 0x270be5a1b0df632e, 0x99ce254d7b4c4f1b,
        0x59e3216b52b41877, 0xa2f93293801c04a6, 0x918636326348e218, 0xae86f76ee4e0e5b9,
        0x40a23a65d6b40eaf, 0x5b97601cb47b62b5, 0x801589f0e4adc76c, 0xbf3f651ea35c8ec0,
        0x362a6a1964ddb0ce, 0xf1d65891b205d076, 0x9373c65498433fa3, 0x6b30e139cac42393,
        0xa1fc1b3f77c24664, 0x5acfbb93deb25319, 0x4a80224745f35e4e, 0x67864307038cf5b9,
        0x3887f29b2e558f83, 0xda9e9121502102ca, 0xe33fa836ae89ca39, 0x087995bb622dca1f,
        0x9c970ec252cf7591, 0x23d5a3af9ff159ed, 0xc0a13092e8d14a4e, 0x88554a28e247ef8f,
        0xa6bf38059180369b, 0x3a5bac8f71bf39c4, 0x1311d3af12a5d176, 0x0d7ec7c44a5561a0,
        0xc5cd13eb2edb1699, 0x0068cfd8f19d606e, 0x7bed71b3ec119a74, 0xf0eaaee9ecb023c7,
        0x58b6bfa42d227ad8, 0xd84880b1ba2499f2, 0x9b9a5504df85ffbe, 0xa4fc89f1c0b40487,
        0x73bae71fc8e65f7c, 0xe8c91670f9509695, 0x1a5ad2de8efd2f8f, 0xb127d9ceb9b3b747,
        0xa09d698a3ea1fc87, 0x9097f9e351c96cb3, 0xcf76e3f3deb6c041, 0x948996dfad36ce3d,
        0x6ee7b3bab3bb96bb, 0xe22a585272361380, 0x3c3e10536dc633a7, 0xa98d34d30940e937,
        0xc1c15064b6346b40, 0xa3e6b9de4a204a8f, 0x1f80c5da50468761, 0x368a0e061592b0c0,
        0xf502e9a92afd43dd, 0xd3216887274a3edb, 0x1f3733656d490453, 0xf5d6f0f59238756d,
        0x7fa74cad4f8f49be, 0x0a4cc5101902aa65, 0xde83b783589d2999, 0x9a3d168af8526ea9,
        0xdf20b0f6909bd126, 0xd2573396d175cb97, 0x3a8445a83f17ce9d, 0x2a61e5b478637d7f,
        0xbeddf4cca41590fe, 0xa346421fd1e247b0, 0x9bf76596b152d3b1, 0xc114d14b492c780a,
        0xffa334c899a56935, 0x6153441f85ad0311, 0x8166bf79a6af0e49, 0xa3cc6fee0ac91052,
        0x66c729049b0857e3, 0xab801b0ffa036e26, 0x1176350ce75cbb1a, 0x9b134675bb423c7f,
        0x11db0fd5c50e1acc, 0xb92f1b3c29c0d351, 0xcc63847a252c7189, 0x2f707fe217346c49,
        0x8c50af088a4c4436, 0xd8356c453fef1bd7, 0x0d33cffd973610db, 0xc95c612f4eb724cb,
        0xabc78cfad0f2d324, 0xf025aae3fbd3b3e9, 0x10159b4bbadd2075, 0x91b5f21137dbc071,
        0xa4a5745a5785321b, 0x427b721a7cbaffad, 0x70eee9005e154e68, 0xf3af5285573ce460,
        0x9b78774b19f136f6, 0x0e6bdb77eb1ecb24, 0x9de4636aa8279591, 0xf330bf67e0360b52,
        0x8b308b9e295fb729, 0xb5733dc8d025dd64, 0x0512efda63d4423a, 0x6d1101200a1129e6,
        0x4889dd3273089893, 0xee1e3d930fe924d8, 0x6d5e4b1f38be7f29, 0x28e78a5c8773a4de,
        0x96047f44a1070375, 0xa207a81e8efcd151, 0x38421774147f381c, 0xfde7e9472bdd16eb,
        0xdc6b7c0d7c72ba3f, 0xbcb18d6e8e1406c0, 0x375cbc3f13b5df3b, 0x3ab6ebf2799ed48b,
        0x2380501cc2fd8034, 0x8be36106dd31d8e7, 0x52503662db01d2ff, 0x5aa546d2e14ae726,
        0xadbbb3d403b89501, 0x4b0727eba37ce9fe, 0x9b0977aa870a4c15, 0xadd57b3d728806ef,
        0xc18283152500a811, 0xb5302d315958290e, 0x6db4fd0b5db34cbb, 0xc9f4fd368f172b8b,
        0x180fe385f6498ff1, 0xa564b6814ff53c5f, 0x186e9ac62bce40b3, 0xdde6528724794e10,
        0x77d732b7af309019, 0x5d8dd3d7527530cd, 0xb4f4f7592b016d8a, 0x20a148452e6b7c0b,
        0xc9209b80b04bab90, 0xf8698a3a45496cc6, 0xac5f487fa8d3b205, 0xc96dc0cd87154cf6,
        0x9baee68d5e68d2f7, 0xf8f9064941e5a57b, 0x494bb302d79968fd, 0x016772c6847a7e50,
    ]

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
            if let i = firstBoundary(p, g.baseAddress!, minSize, normal, hardMask) { return i + 1 }
            if let i = firstBoundary(p, g.baseAddress!, normal, end, easyMask) { return i + 1 }
            return end
        }
    }

    /// Bytes each of the four lanes of `firstBoundary` takes per round.
    static let lane = 16 << 10

    /// The first i in [a, b) at which h (after byte i, from minSize on) has
    /// no bit of `mask` set; nil if none. a >= minSize.
    ///
    /// Why four lanes: each step of h waits for the one before it, so one
    /// scan uses a fraction of the core (2.2 GB/s here). h after byte i
    /// depends only on bytes i-63...i (from minSize on), so a lane can
    /// start anywhere by hashing the 64 bytes before it first: four lanes
    /// scan four consecutive 16 KiB stretches at once (3.7 GB/s). The cut
    /// is still the first boundary in order: a lane's hit stands only once
    /// the earlier lanes' stretches are scanned to their ends.
    ///
    /// A round whose bytes, and the 63 before it, are all zero is passed
    /// over unscanned: h is then the fixed point of h = 2h + gear[0], that
    /// is −gear[0] (`zeroRun`), which has bits of both masks set, so no
    /// boundary lies in it (a disk image's empty half: 512 MiB scanned for
    /// nothing).
    @inline(__always)
    static func firstBoundary(_ p: UnsafePointer<UInt8>, _ g: UnsafePointer<UInt64>,
                              _ a: Int, _ b: Int, _ mask: UInt64) -> Int? {
        let w = lane
        var i = a
        while b - i >= 4 * w {
            if zeroRun & mask != 0, i - 63 >= minSize, p[i] == 0, UnsafeRawBufferPointer(start: p + i - 63, count: 63 + 4 * w).isAllZero {
                i += 4 * w
                continue
            }
            let s1 = i + w, s2 = s1 + w, s3 = s2 + w
            var h0 = hash(p, g, through: i - 1), h1 = hash(p, g, through: s1 - 1)
            var h2 = hash(p, g, through: s2 - 1), h3 = hash(p, g, through: s3 - 1)
            var q0 = p + i, q1 = p + s1, q2 = p + s2, q3 = p + s3
            var hit = false
            while q0 < p + s1 {
                h0 = (h0 &<< 1) &+ g[Int(q0.pointee)]
                h1 = (h1 &<< 1) &+ g[Int(q1.pointee)]
                h2 = (h2 &<< 1) &+ g[Int(q2.pointee)]
                h3 = (h3 &<< 1) &+ g[Int(q3.pointee)]
                if h0 & mask == 0 || h1 & mask == 0 || h2 & mask == 0 || h3 & mask == 0 {
                    hit = true
                    break
                }
                q0 += 1; q1 += 1; q2 += 1; q3 += 1
            }
            if hit {
                let t = q0 - (p + i)
                if h0 & mask == 0 { return i + t }
                if let x = scan(p, g, i + t + 1, s1, mask, h0) { return x }
                if h1 & mask == 0 { return s1 + t }
                if let x = scan(p, g, s1 + t + 1, s2, mask, h1) { return x }
                if h2 & mask == 0 { return s2 + t }
                if let x = scan(p, g, s2 + t + 1, s3, mask, h2) { return x }
                return s3 + t
            }
            i += 4 * w
        }
        return scan(p, g, i, b, mask, hash(p, g, through: i - 1))
    }

    /// h over a run of 64 zeros or more: −gear[0], the fixed point of
    /// h = 2h + gear[0]. A run holds no boundary for a mask this has bits
    /// of (both of ours; `firstBoundary` checks the mask it is given).
    static let zeroRun: UInt64 = 0 &- gear[0]

    /// h after byte i, from the last 64 bytes (none before minSize): the
    /// shifts have pushed every earlier byte out of it.
    @inline(__always)
    static func hash(_ p: UnsafePointer<UInt8>, _ g: UnsafePointer<UInt64>, through i: Int) -> UInt64 {
        var h: UInt64 = 0
        var j = max(minSize, i - 63)
        while j <= i {
            h = (h &<< 1) &+ g[Int(p[j])]
            j += 1
        }
        return h
    }

    /// One lane from `a` (h the hash after byte a-1) to the first boundary
    /// before `b`.
    @inline(__always)
    static func scan(_ p: UnsafePointer<UInt8>, _ g: UnsafePointer<UInt64>,
                     _ a: Int, _ b: Int, _ mask: UInt64, _ h0: UInt64) -> Int? {
        var h = h0, i = a
        while i < b {
            h = (h &<< 1) &+ g[Int(p[i])]
            if h & mask == 0 { return i }
            i += 1
        }
        return nil
    }
}

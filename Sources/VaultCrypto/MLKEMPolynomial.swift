// Polynomial arithmetic for ML-KEM (FIPS 203, August 2024), on
// R_q = Z_q[X]/(X^256 + 1) with q = 3329, and its NTT domain T_q.
//
// FIPS 203 algorithms here:
//   Algorithm 5  ByteEncode_d      byteEncode12, compressEncode10/4/1
//   Algorithm 6  ByteDecode_d      byteDecode12, decodeDecompress10/4/1
//   Algorithm 7  SampleNTT         sampleNTT (rejection sampling, public data)
//   Algorithm 8  SamplePolyCBD_2   sampleCBD2 (eta = 2, the only eta of ML-KEM-768)
//   Algorithm 9  NTT               ntt
//   Algorithm 10 NTT^-1            inverseNTT
//   Algorithm 11 MultiplyNTTs      multiplyAccumulate (with the sum over a vector)
//   Algorithm 12 BaseCaseMultiply  inside multiplyAccumulate
//   Compress_d / Decompress_d (section 4.2.1), fused with the encodings.
//
// Representation. A polynomial is 256 Int16 coefficients at an
// UnsafeMutablePointer<Int16> into the caller's scratch buffer (one stack
// allocation per operation, zeroed before it is released; see
// MLKEM768.swift). Coefficients are kept small but not always in [0, q):
// the bounds each function accepts and returns are in its comment. The
// arithmetic is the one the Kyber reference implementation uses: Montgomery
// multiplication with R = 2^16 (montgomeryReduce), Barrett reduction
// (barrettReduce), and NTT constants in Montgomery form.
//
// Constant time. Every function that touches secret coefficients is
// straight-line arithmetic: no branch and no table index depends on a
// coefficient (the zeta table is indexed by loop counters only), there is no
// `%` or `/` (Compress uses multiply-and-shift with constants checked for
// every input in the tests), and every operation is a wrapping one (`&+`,
// `&-`, `&*`, `truncatingIfNeeded`), so no overflow check becomes a branch.
// `make ct` checks this under valgrind. Only sampleNTT (on bytes derived
// from the public seed rho) and isCanonical12 (on the public ek) branch on
// data.
enum MLKEMPoly {
    static let n = 256
    static let q: Int16 = 3329
    /// q^-1 mod 2^16 as a signed 16-bit value (62209 - 65536).
    static let qInverse: Int16 = -3327

    typealias Pointer = UnsafeMutablePointer<Int16>

    // MARK: Modular reduction

    /// a · 2^-16 mod q, for |a| < q · 2^15; the result is in (-q, q).
    @inline(__always)
    static func montgomeryReduce(_ a: Int32) -> Int16 {
        let t = Int16(truncatingIfNeeded: a) &* qInverse
        return Int16(truncatingIfNeeded: (a &- Int32(t) &* Int32(q)) >> 16)
    }

    /// a mod q, centered in [-(q-1)/2, (q-1)/2], for every Int16 a.
    /// 20159 = round(2^26 / q).
    @inline(__always)
    static func barrettReduce(_ a: Int16) -> Int16 {
        let t = Int16(truncatingIfNeeded: (Int32(20159) &* Int32(a) &+ (1 << 25)) >> 26)
        return a &- t &* q
    }

    /// a · b · 2^-16 mod q, in (-q, q), for |a · b| < q · 2^15.
    @inline(__always)
    static func fqmul(_ a: Int16, _ b: Int16) -> Int16 {
        montgomeryReduce(Int32(a) &* Int32(b))
    }

    /// Maps (-q, q) to [0, q) by adding q to negative values, without a branch.
    @inline(__always)
    static func addQIfNegative(_ a: Int16) -> Int16 {
        a &+ ((a >> 15) & q)
    }

    /// Barrett-reduces every coefficient into [-(q-1)/2, (q-1)/2].
    static func reduce(_ r: Pointer) {
        for i in 0..<n { r[i] = barrettReduce(r[i]) }
    }

    /// r += a, coefficient-wise (no reduction: callers keep the sums small).
    static func add(_ r: Pointer, _ a: Pointer) {
        for i in 0..<n { r[i] = r[i] &+ a[i] }
    }

    /// r = a - r, coefficient-wise (no reduction).
    static func subtractFrom(_ r: Pointer, _ a: Pointer) {
        for i in 0..<n { r[i] = a[i] &- r[i] }
    }

    /// Multiplies every coefficient by 2^16 (into Montgomery form):
    /// 1353 = 2^32 mod q, and fqmul divides by 2^16 once. Output in (-q, q).
    static func toMontgomery(_ r: Pointer) {
        for i in 0..<n { r[i] = fqmul(r[i], 1353) }
    }

    // MARK: NTT (Algorithms 9-12)

    /// zetas[i] = 17^BitRev7(i) · 2^16 mod q, centered: the constants of
    /// FIPS 203 appendix A in Montgomery form, in the order NTT uses them.
    static let zetas: [Int16] = (0..<128).map { i in
        var reversed = 0
        for bit in 0..<7 where (i >> bit) & 1 == 1 { reversed |= 1 << (6 - bit) }
        var z = 1
        for _ in 0..<reversed { z = z * 17 % 3329 }
        let m = z * 65536 % 3329
        return Int16(m > 3329 / 2 ? m - 3329 : m)
    }

    /// NTT (Algorithm 9) in place, then Barrett reduction. Input |a| < q;
    /// output in [-(q-1)/2, (q-1)/2], in FIPS 203's (bit-reversed) order.
    /// Each layer is a separate call with its length as a constant, so the
    /// optimizer can vectorize the butterflies of the long layers.
    static func ntt(_ r: Pointer) {
        zetas.withUnsafeBufferPointer { z in
            guard let zp = z.baseAddress else { return }
            nttLayer(r, zp, len: 128, firstZeta: 1)
            nttLayer(r, zp, len: 64, firstZeta: 2)
            nttLayer(r, zp, len: 32, firstZeta: 4)
            nttLayer(r, zp, len: 16, firstZeta: 8)
            nttLayer(r, zp, len: 8, firstZeta: 16)
            nttLayer(r, zp, len: 4, firstZeta: 32)
            nttLayer(r, zp, len: 2, firstZeta: 64)
        }
        reduce(r)
    }

    /// One layer of Algorithm 9: blocks of 2 len coefficients, the k-th
    /// block using zetas[firstZeta + k].
    @inline(__always)
    private static func nttLayer(_ r: Pointer, _ z: UnsafePointer<Int16>, len: Int, firstZeta: Int) {
        for block in 0..<(n / (2 * len)) {
            let zeta = z[firstZeta &+ block]
            let lo = r + block &* 2 &* len, hi = lo + len
            for j in 0..<len {
                let t = fqmul(zeta, hi[j])
                hi[j] = lo[j] &- t
                lo[j] = lo[j] &+ t
            }
        }
    }

    /// NTT^-1 (Algorithm 10) in place, times 2^16: applied to the output of
    /// multiplyAccumulate (which carries a factor 2^-16) it gives the plain
    /// product. 1441 = 2^32 / 128 mod q folds FIPS 203's final multiplication
    /// by 128^-1 = 3303 into the same step. Output in (-q, q).
    static func inverseNTT(_ r: Pointer) {
        zetas.withUnsafeBufferPointer { z in
            guard let zp = z.baseAddress else { return }
            inverseNTTLayer(r, zp, len: 2, lastZeta: 127)
            inverseNTTLayer(r, zp, len: 4, lastZeta: 63)
            inverseNTTLayer(r, zp, len: 8, lastZeta: 31)
            inverseNTTLayer(r, zp, len: 16, lastZeta: 15)
            inverseNTTLayer(r, zp, len: 32, lastZeta: 7)
            inverseNTTLayer(r, zp, len: 64, lastZeta: 3)
            inverseNTTLayer(r, zp, len: 128, lastZeta: 1)
        }
        for i in 0..<n { r[i] = fqmul(r[i], 1441) }
    }

    /// One layer of Algorithm 10: the k-th block uses zetas[lastZeta - k].
    @inline(__always)
    private static func inverseNTTLayer(_ r: Pointer, _ z: UnsafePointer<Int16>, len: Int, lastZeta: Int) {
        for block in 0..<(n / (2 * len)) {
            let zeta = z[lastZeta &- block]
            let lo = r + block &* 2 &* len, hi = lo + len
            for j in 0..<len {
                let t = lo[j]
                lo[j] = barrettReduce(t &+ hi[j])
                hi[j] = fqmul(zeta, hi[j] &- t)
            }
        }
    }

    /// r = (a_0 ∘ b_0 + ... + a_{k-1} ∘ b_{k-1}) · 2^-16: MultiplyNTTs
    /// (Algorithm 11) summed over vectors of k polynomials stored one after
    /// the other. Each BaseCaseMultiply (Algorithm 12) is
    /// (a0 + a1 X)(b0 + b1 X) mod (X^2 - gamma), gamma = 17^(2 BitRev7(i) + 1);
    /// for the pair 2i those are zetas[64 + i] and for 2i + 1 its negative.
    /// The sums are taken in 32 bits and reduced once: with |a|, |b| < q
    /// each term is below 2 q^2, and 2 k q^2 < q · 2^15 for k <= 4.
    /// Output in (-q, q).
    static func multiplyAccumulate(_ r: Pointer, _ a: Pointer, _ b: Pointer, k: Int) {
        zetas.withUnsafeBufferPointer { z in
            for i in 0..<64 {
                baseCaseMultiplyAccumulate(r, a, b, k: k, offset: 4 * i, gamma: z[64 + i])
                baseCaseMultiplyAccumulate(r, a, b, k: k, offset: 4 * i + 2, gamma: 0 &- z[64 + i])
            }
        }
    }

    @inline(__always)
    private static func baseCaseMultiplyAccumulate(_ r: Pointer, _ a: Pointer, _ b: Pointer, k: Int,
                                                   offset: Int, gamma: Int16) {
        var r0: Int32 = 0, r1: Int32 = 0
        for v in 0..<k {
            let pa = a + (v * n + offset), pb = b + (v * n + offset)
            let a0 = Int32(pa[0]), a1 = pa[1], b0 = Int32(pb[0]), b1 = pb[1]
            r0 = r0 &+ a0 &* b0 &+ Int32(fqmul(a1, b1)) &* Int32(gamma)
            r1 = r1 &+ a0 &* Int32(b1) &+ Int32(a1) &* b0
        }
        r[offset] = montgomeryReduce(r0)
        r[offset + 1] = montgomeryReduce(r1)
    }

    // MARK: Sampling (Algorithms 7 and 8)

    /// SampleNTT (Algorithm 7), resumable: reads 3-byte groups of `bytes`
    /// from `position` and appends accepted values (d < q) to `r` from
    /// `count`. Returns true when all 256 are there. Branches on the bytes,
    /// which are SHAKE128 of the public seed rho. Output in [0, q).
    static func sampleNTT(_ r: Pointer, from bytes: UnsafeRawBufferPointer,
                          count: inout Int, position: inout Int) -> Bool {
        let b = bytes.bindMemory(to: UInt8.self)
        while count < n && position + 3 <= b.count {
            let b0 = UInt16(b[position]), b1 = UInt16(b[position + 1]), b2 = UInt16(b[position + 2])
            position += 3
            let d1 = b0 | (b1 & 0x0f) << 8
            let d2 = b1 >> 4 | b2 << 4
            if d1 < UInt16(q) { r[count] = Int16(d1); count += 1 }
            if d2 < UInt16(q) && count < n { r[count] = Int16(d2); count += 1 }
        }
        return count == n
    }

    /// SamplePolyCBD_2 (Algorithm 8, eta = 2) from 128 bytes: coefficient i
    /// is (b[4i] + b[4i+1]) - (b[4i+2] + b[4i+3]) over the little-endian
    /// bits b of the input. Output in [-2, 2].
    static func sampleCBD2(_ r: Pointer, from bytes: UnsafeRawPointer) {
        let b = bytes.assumingMemoryBound(to: UInt8.self)
        for i in 0..<32 {
            let t = UInt32(b[4 * i]) | UInt32(b[4 * i + 1]) << 8 | UInt32(b[4 * i + 2]) << 16 | UInt32(b[4 * i + 3]) << 24
            // Each 2-bit field of d holds the sum of one pair of bits.
            let d = (t & 0x5555_5555) &+ ((t >> 1) & 0x5555_5555)
            for j in 0..<8 {
                let x = Int16(truncatingIfNeeded: (d >> (4 * j)) & 3)
                let y = Int16(truncatingIfNeeded: (d >> (4 * j + 2)) & 3)
                r[8 * i + j] = x &- y
            }
        }
    }

    // MARK: Encodings (Algorithms 5 and 6, section 4.2.1)

    /// ByteEncode_12 (Algorithm 5) of coefficients in (-q, q), first mapped
    /// to [0, q): 384 bytes, two coefficients in three bytes.
    static func byteEncode12(_ r: Pointer, into out: UnsafeMutableRawPointer) {
        let o = out.assumingMemoryBound(to: UInt8.self)
        for i in 0..<(n / 2) {
            let t0 = UInt16(bitPattern: addQIfNegative(r[2 * i]))
            let t1 = UInt16(bitPattern: addQIfNegative(r[2 * i + 1]))
            o[3 * i] = UInt8(truncatingIfNeeded: t0)
            o[3 * i + 1] = UInt8(truncatingIfNeeded: t0 >> 8 | t1 << 4)
            o[3 * i + 2] = UInt8(truncatingIfNeeded: t1 >> 4)
        }
    }

    /// ByteDecode_12 (Algorithm 6) of 384 bytes, each 12-bit value taken mod
    /// q (one branch-free conditional subtraction): output in [0, q).
    static func byteDecode12(_ r: Pointer, from bytes: UnsafeRawPointer) {
        let b = bytes.assumingMemoryBound(to: UInt8.self)
        for i in 0..<(n / 2) {
            let b0 = Int16(b[3 * i]), b1 = Int16(b[3 * i + 1]), b2 = Int16(b[3 * i + 2])
            r[2 * i] = subtractQIfAtLeastQ(b0 | (b1 & 0x0f) << 8)
            r[2 * i + 1] = subtractQIfAtLeastQ(b1 >> 4 | b2 << 4)
        }
    }

    /// a - q if a >= q, else a, for a in [0, 4096).
    @inline(__always)
    static func subtractQIfAtLeastQ(_ a: Int16) -> Int16 {
        let t = a &- q
        return t &+ ((t >> 15) & q)
    }

    /// The modulus check of FIPS 203 section 7.2 on 384 · k bytes of an
    /// encapsulation key: true if every 12-bit value is below q, i.e.
    /// ByteEncode_12(ByteDecode_12(bytes)) == bytes. The key is public.
    static func isCanonical12(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let b = bytes.bindMemory(to: UInt8.self)
        var i = 0
        while i + 3 <= b.count {
            let b0 = UInt16(b[i]), b1 = UInt16(b[i + 1]), b2 = UInt16(b[i + 2])
            if b0 | (b1 & 0x0f) << 8 >= UInt16(q) || b1 >> 4 | b2 << 4 >= UInt16(q) { return false }
            i += 3
        }
        return true
    }

    /// Compress_d(x) = round(2^d x / q) mod 2^d for x in [0, q), as
    /// ((x << d) + (q+1)/2) · m >> s with m ≈ 2^s / q (no division). The
    /// tests check every x against the exact formula.
    @inline(__always)
    static func compress10(_ x: Int16) -> UInt16 {
        let v = (UInt64(UInt16(bitPattern: x)) << 10 &+ 1665) &* 1_290_167
        return UInt16(truncatingIfNeeded: v >> 32) & 0x3ff
    }

    @inline(__always)
    static func compress4(_ x: Int16) -> UInt8 {
        // The product can pass 2^32; only bits 28-31 are kept, so wrapping is exact.
        let v = (UInt32(UInt16(bitPattern: x)) << 4 &+ 1665) &* 80635
        return UInt8(truncatingIfNeeded: v >> 28) & 0x0f
    }

    @inline(__always)
    static func compress1(_ x: Int16) -> UInt8 {
        let v = (UInt32(UInt16(bitPattern: x)) << 1 &+ 1665) &* 80635
        return UInt8(truncatingIfNeeded: v >> 28) & 1
    }

    /// Decompress_d(y) = round(q y / 2^d) = (q y + 2^(d-1)) >> d.
    @inline(__always)
    static func decompress(_ y: UInt32, bits d: UInt32) -> Int16 {
        Int16(truncatingIfNeeded: (y &* UInt32(q) &+ (1 << (d - 1))) >> d)
    }

    /// ByteEncode_10(Compress_10(r)) of coefficients in (-q, q): 320 bytes.
    static func compressEncode10(_ r: Pointer, into out: UnsafeMutableRawPointer) {
        let o = out.assumingMemoryBound(to: UInt8.self)
        for i in 0..<(n / 4) {
            let t0 = compress10(addQIfNegative(r[4 * i])), t1 = compress10(addQIfNegative(r[4 * i + 1]))
            let t2 = compress10(addQIfNegative(r[4 * i + 2])), t3 = compress10(addQIfNegative(r[4 * i + 3]))
            o[5 * i] = UInt8(truncatingIfNeeded: t0)
            o[5 * i + 1] = UInt8(truncatingIfNeeded: t0 >> 8 | t1 << 2)
            o[5 * i + 2] = UInt8(truncatingIfNeeded: t1 >> 6 | t2 << 4)
            o[5 * i + 3] = UInt8(truncatingIfNeeded: t2 >> 4 | t3 << 6)
            o[5 * i + 4] = UInt8(truncatingIfNeeded: t3 >> 2)
        }
    }

    /// Decompress_10(ByteDecode_10(320 bytes)): output in [0, q].
    static func decodeDecompress10(_ r: Pointer, from bytes: UnsafeRawPointer) {
        let b = bytes.assumingMemoryBound(to: UInt8.self)
        for i in 0..<(n / 4) {
            let b0 = UInt32(b[5 * i]), b1 = UInt32(b[5 * i + 1]), b2 = UInt32(b[5 * i + 2])
            let b3 = UInt32(b[5 * i + 3]), b4 = UInt32(b[5 * i + 4])
            r[4 * i] = decompress((b0 | b1 << 8) & 0x3ff, bits: 10)
            r[4 * i + 1] = decompress((b1 >> 2 | b2 << 6) & 0x3ff, bits: 10)
            r[4 * i + 2] = decompress((b2 >> 4 | b3 << 4) & 0x3ff, bits: 10)
            r[4 * i + 3] = decompress((b3 >> 6 | b4 << 2) & 0x3ff, bits: 10)
        }
    }

    /// ByteEncode_4(Compress_4(r)) of coefficients in (-q, q): 128 bytes.
    static func compressEncode4(_ r: Pointer, into out: UnsafeMutableRawPointer) {
        let o = out.assumingMemoryBound(to: UInt8.self)
        for i in 0..<(n / 2) {
            o[i] = compress4(addQIfNegative(r[2 * i])) | compress4(addQIfNegative(r[2 * i + 1])) << 4
        }
    }

    /// Decompress_4(ByteDecode_4(128 bytes)).
    static func decodeDecompress4(_ r: Pointer, from bytes: UnsafeRawPointer) {
        let b = bytes.assumingMemoryBound(to: UInt8.self)
        for i in 0..<(n / 2) {
            r[2 * i] = decompress(UInt32(b[i] & 0x0f), bits: 4)
            r[2 * i + 1] = decompress(UInt32(b[i] >> 4), bits: 4)
        }
    }

    /// ByteEncode_1(Compress_1(r)) of coefficients in (-q, q): the 32-byte
    /// message of K-PKE.Decrypt (Algorithm 15).
    static func compressEncode1(_ r: Pointer, into out: UnsafeMutableRawPointer) {
        let o = out.assumingMemoryBound(to: UInt8.self)
        for i in 0..<32 {
            var byte: UInt8 = 0
            for j in 0..<8 { byte |= compress1(addQIfNegative(r[8 * i + j])) << j }
            o[i] = byte
        }
    }

    /// Decompress_1(ByteDecode_1(m)) of a 32-byte message: each bit becomes
    /// 0 or (q+1)/2 = 1665 through a mask, not a branch.
    static func decodeDecompress1(_ r: Pointer, from bytes: UnsafeRawPointer) {
        let b = bytes.assumingMemoryBound(to: UInt8.self)
        for i in 0..<32 {
            for j in 0..<8 {
                let mask = 0 &- Int16(truncatingIfNeeded: (b[i] >> j) & 1)
                r[8 * i + j] = mask & 1665
            }
        }
    }
}

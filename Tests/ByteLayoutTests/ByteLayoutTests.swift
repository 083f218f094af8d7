import Testing
import ByteLayout

/// ByteReader and ByteWriter: big-endian fields, exact ends, and hostile
/// input (short, long, lengths that overflow) as errors, never traps.
@Suite("Byte layout")
struct ByteLayoutTests {
    @Test func readsBigEndianFields() throws {
        var r = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                            0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0xaa, 0xbb])
        #expect(try r.u8() == 0x01)
        #expect(try r.u16() == 0x0203)
        #expect(try r.u32() == 0x0405_0607)
        #expect(try r.u64() == 0x0809_0a0b_0c0d_0e0f)
        #expect(r.offset == 15 && r.remaining == 2)
        #expect(try r.bytes(2) == [0xaa, 0xbb])
        try r.finish()
    }

    @Test func signedIsTheBitPattern() throws {
        var r = ByteReader([UInt8](repeating: 0xff, count: 8) + [0x80, 0, 0, 0, 0, 0, 0, 0])
        #expect(try r.i64() == -1)
        #expect(try r.i64() == Int64.min)
    }

    @Test func writerIsTheMirror() throws {
        var w = ByteWriter([0x56])
        w.u8(1); w.u16(0x0203); w.u32(0x0405_0607); w.u64(0x0809_0a0b_0c0d_0e0f); w.i64(-2)
        w.bytes([9, 9])
        try w.lengthPrefixed(UInt16.self, [7, 7, 7])
        #expect(w.bytes == [0x56, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xa, 0xb, 0xc, 0xd, 0xe, 0xf,
                            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 9, 9, 0, 3, 7, 7, 7])
        var r = ByteReader(w.bytes)
        try r.expect([0x56])
        #expect(try r.u8() == 1 && r.u16() == 0x0203 && r.u32() == 0x0405_0607 && r.u64() == 0x0809_0a0b_0c0d_0e0f)
        #expect(try r.i64() == -2)
        #expect(try r.bytes(2) == [9, 9])
        #expect(try r.lengthPrefixed(UInt16.self) == [7, 7, 7])
        try r.finish()
        #expect(ByteWriter.bigEndian(UInt32(0x0102_0304)) == [1, 2, 3, 4])
    }

    @Test func truncatedInputIsAnErrorAtEveryLength() throws {
        let full: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        for n in 0..<8 {
            var r = ByteReader(full[..<n])
            #expect(throws: ByteLayoutError.truncated(needed: 8, remaining: n)) { try r.u64() }
            #expect(r.offset == 0, "a failed read consumes nothing")
        }
        var r = ByteReader([1, 2, 3])
        #expect(throws: ByteLayoutError.truncated(needed: 4, remaining: 3)) { try r.u32() }
        #expect(throws: ByteLayoutError.truncated(needed: 4, remaining: 3)) { try r.bytes(4) }
        #expect(try r.u16() == 0x0102)
        #expect(throws: ByteLayoutError.truncated(needed: 2, remaining: 1)) { try r.u16() }
    }

    @Test func finishRequiresTheExactEnd() throws {
        var r = ByteReader([1, 2, 3])
        _ = try r.u16()
        #expect(throws: ByteLayoutError.trailingBytes(count: 1)) { try r.finish() }
        _ = try r.u8()
        try r.finish()
        try ByteReader([]).finish()
    }

    @Test func hostileLengths() throws {
        // A u64 length above Int.max, one that fits Int but not the input,
        // and one above the format's bound.
        var huge = ByteReader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1])
        #expect(throws: ByteLayoutError.badLength(UInt64.max)) { try huge.lengthPrefixed(UInt64.self) }
        var big = ByteReader([0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1])
        #expect(throws: ByteLayoutError.truncated(needed: Int.max, remaining: 1)) { try big.lengthPrefixed(UInt64.self) }
        var bounded = ByteReader([0, 0, 0, 5, 1, 2, 3, 4, 5])
        #expect(throws: ByteLayoutError.badLength(5)) { try bounded.lengthPrefixed(UInt32.self, max: 4) }
        var r = ByteReader([1, 2, 3])
        #expect(throws: ByteLayoutError.badLength(UInt64(bitPattern: -1))) { try r.bytes(-1) }
        #expect(throws: ByteLayoutError.truncated(needed: Int.max, remaining: 3)) { try r.skip(Int.max) }
        _ = try r.u8()
        #expect(throws: ByteLayoutError.truncated(needed: Int.max, remaining: 2)) { try r.bytes(Int.max) }
        var w = ByteWriter()
        #expect(throws: ByteLayoutError.badLength(256)) { try w.lengthPrefixed(UInt8.self, [UInt8](repeating: 0, count: 256)) }
        #expect(w.bytes.isEmpty)
    }

    @Test func slicesKeepTheirOwnOffsets() throws {
        let b: [UInt8] = [9, 9, 0, 0, 0, 2, 0xab, 0xcd, 7]
        var r = ByteReader(b[2..<8])
        #expect(r.offset == 0 && r.remaining == 6)
        var inner = try r.reader(4)
        #expect(try inner.u32() == 2)
        try inner.finish()
        #expect(try r.bytes(2) == [0xab, 0xcd])
        try r.finish()
        #expect(throws: ByteLayoutError.mismatch(offset: 0)) {
            var m = ByteReader([1, 2]); try m.expect([1, 3])
        }
        var rest = ByteReader([1, 2, 3])
        _ = try rest.u8()
        #expect(rest.rest() == [2, 3] && rest.isAtEnd)
    }

    @Test func rawReaderReadsTheSameFields() throws {
        var w = ByteWriter()
        w.u8(1); w.u16(0x0203); w.u32(0x0405_0607); w.u64(0x0809_0a0b_0c0d_0e0f); w.i64(-2)
        try w.lengthPrefixed(UInt16.self, [7, 7, 7])
        w.bytes([0xaa, 0xbb])
        try w.bytes.withUnsafeBytes { b in
            var r = RawByteReader(b)
            #expect(try r.u8() == 1 && r.u16() == 0x0203 && r.u32() == 0x0405_0607 && r.u64() == 0x0809_0a0b_0c0d_0e0f)
            #expect(try r.i64() == -2)
            #expect(try r.integer(UInt16.self) == 3)
            #expect(try r.bytes(3) == [7, 7, 7])
            #expect(r.offset == 28 && r.remaining == 2)
            #expect(throws: ByteLayoutError.trailingBytes(count: 2)) { try r.finish() }
            let field = try r.slice(2)
            // A view of the lent memory, not a copy.
            #expect(field.baseAddress == b.baseAddress! + 28 && Array(field) == [0xaa, 0xbb])
            #expect(r.isAtEnd)
            try r.finish()
        }
    }

    @Test func rawReaderRejectsHostileInput() throws {
        let full: [UInt8] = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1]
        try full.withUnsafeBytes { b in
            for n in 0..<8 {
                var r = RawByteReader(UnsafeRawBufferPointer(rebasing: b[..<n]))
                #expect(throws: ByteLayoutError.truncated(needed: 8, remaining: n)) { try r.u64() }
                #expect(r.offset == 0, "a failed read consumes nothing")
            }
            var huge = RawByteReader(b)
            #expect(throws: ByteLayoutError.badLength(UInt64.max)) { try huge.length(UInt64.self) }
            var bounded = RawByteReader(b)
            #expect(throws: ByteLayoutError.badLength(0xffff)) { try bounded.length(UInt16.self, max: 1024) }
            var r = RawByteReader(b)
            #expect(throws: ByteLayoutError.badLength(UInt64(bitPattern: -1))) { try r.slice(-1) }
            #expect(throws: ByteLayoutError.truncated(needed: Int.max, remaining: 9)) { try r.bytes(Int.max) }
            _ = try r.u8()
            #expect(throws: ByteLayoutError.truncated(needed: Int.max, remaining: 8)) { try r.slice(Int.max) }
        }
        var empty = RawByteReader(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(throws: ByteLayoutError.truncated(needed: 1, remaining: 0)) { try empty.u8() }
        try empty.finish()
    }

    /// Every length around the eight-byte words, with one nonzero byte at
    /// every position (the tail bytes too), and at offsets that are not aligned.
    @Test func zeroCheckFindsAnyNonzeroByte() {
        var bytes = [UInt8](repeating: 0, count: 80)
        bytes.withUnsafeBytes { all in
            for start in 0..<8 {
                for length in 0...(all.count - start) {
                    #expect(UnsafeRawBufferPointer(rebasing: all[start..<(start + length)]).isAllZero)
                }
            }
        }
        for start in 0..<8 {
            for length in 1...40 {
                for at in 0..<length {
                    bytes[start + at] = 0x80 >> UInt8(at % 8)
                    let found = bytes.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)]).isAllZero }
                    #expect(!found, "a byte at \(at) of \(length), from \(start)")
                    bytes[start + at] = 0
                }
            }
        }
        #expect(UnsafeRawBufferPointer(start: nil, count: 0).isAllZero)
        // Across the 4 KiB blocks it looks at one by one: a byte on either
        // side of each block's edge, and the last one, at unaligned starts.
        var big = [UInt8](repeating: 0, count: 3 * 4096 + 100)
        for start in [0, 3] {
            let length = big.count - start
            #expect(big.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[start...]).isAllZero })
            for at in [0, 4095, 4096, 4097, 8191, 8192, 3 * 4096 - 1, 3 * 4096, length - 1] {
                big[start + at] = 1
                #expect(!big.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[start...]).isAllZero }, "a byte at \(at) of \(length)")
                big[start + at] = 0
            }
        }
    }
}

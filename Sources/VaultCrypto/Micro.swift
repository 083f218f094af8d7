
public enum MLKEMMicro {
    public static func context() throws -> AnyObject { try OpenSSL.KeccakContext() }
    public static func run(_ per: (String, Int, () throws -> Void) throws -> Void) throws {
        let h = try OpenSSL.KeccakContext()
        let h2 = try OpenSSL.KeccakContext()
        var buf = [UInt8](repeating: 0, count: 504)
        var inb = [UInt8](repeating: 1, count: 34)
        try per("shake128 34->504 same ctx", 20000) {
            try h.begin(.shake128); try inb.withUnsafeBytes { try h.absorb($0) }; try buf.withUnsafeMutableBytes { try h.squeeze(into: $0) }
        }
        try per("shake128 alternate with shake256", 20000) {
            try h.begin(.shake128); try inb.withUnsafeBytes { try h.absorb($0) }; try buf.withUnsafeMutableBytes { try h.squeeze(into: $0) }
            try h.begin(.shake256); try inb.withUnsafeBytes { try h.absorb($0) }; try buf.withUnsafeMutableBytes { try h.squeeze(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<128])) }
        }
        try per("shake128 + shake256 separate ctx", 20000) {
            try h.begin(.shake128); try inb.withUnsafeBytes { try h.absorb($0) }; try buf.withUnsafeMutableBytes { try h.squeeze(into: $0) }
            try h2.begin(.shake256); try inb.withUnsafeBytes { try h2.absorb($0) }; try buf.withUnsafeMutableBytes { try h2.squeeze(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<128])) }
        }
        var poly = [Int16](repeating: 5, count: 256)
        try per("ntt", 100000) { poly.withUnsafeMutableBufferPointer { MLKEMPoly.ntt($0.baseAddress!) } }
        try per("invntt", 100000) { poly.withUnsafeMutableBufferPointer { MLKEMPoly.inverseNTT($0.baseAddress!) } }
        var three = [Int16](repeating: 5, count: 768)
        try per("basemul k=3", 100000) { poly.withUnsafeMutableBufferPointer { p in three.withUnsafeMutableBufferPointer { t in MLKEMPoly.multiplyAccumulate(p.baseAddress!, t.baseAddress!, t.baseAddress!, k: 3) } } }
        try per("scratch", 100000) { _ = try MLKEM768.withScratch(polynomials: 15, bytes: 632) { _, _ in 0 } }
    }
}

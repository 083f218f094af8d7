import Foundation
import Glibc
import Testing
@testable import VaultCrypto

/// AES-256-GCM has two implementations: libipsec-mb's where its VAES AVX-512
/// code runs, libgcrypt's everywhere else (AEAD.swift). Each must be the
/// function OpenSSL computes, and the faster one must really be the one used
/// where it can be, or the other tests here would check only the fallback.
@Suite struct AESGCMImplementationTests {
    /// What /proc/cpuinfo and the dynamic linker say, independently of the
    /// library's own feature detection.
    static var ipsecMBExpected: Bool {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return false }
        let flags = Set(line.split(separator: " ").map(String.init))
        let needed = ["vaes", "vpclmulqdq", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"]
        guard needed.allSatisfy(flags.contains), let lib = dlopen("libIPSec_MB.so.1", RTLD_NOW | RTLD_LOCAL) else { return false }
        dlclose(lib)
        return true
    }

    static func implementations(key: [UInt8]) throws -> [(String, any AEADCipher)] {
        try key.withUnsafeBytes { k in
            var all: [(String, any AEADCipher)] = [("libgcrypt", try Gcrypt.AEADContext(.aes256GCM, key: k))]
            if let fast = IPSecMB.GCM256Context(key: k) { all.append(("libipsec-mb", fast)) }
            return all
        }
    }

    @Test func theFasterCodeIsUsedWhereThisMachineHasIt() throws {
        #expect(IPSecMB.gcmAvailable == Self.ipsecMBExpected)
        let aead = try AEAD(.aes256GCM, key: .random(count: 32))
        #expect((try aead.context() is IPSecMB.GCM256Context) == Self.ipsecMBExpected)
        // The other AEADs stay with libgcrypt.
        #expect(try AEAD(.aes128GCM, key: .random(count: 16)).context() is Gcrypt.AEADContext)
        #expect(try AEAD(.chacha20Poly1305, key: .random(count: 32)).context() is Gcrypt.AEADContext)
    }

    /// For every AAD length to 70 (the code has paths by AAD size) and longer
    /// ones, and message lengths around the 16-byte block, the 64-byte and
    /// 256-byte strides of the vector code, a chunk and past it: each
    /// implementation seals OpenSSL's bytes and opens OpenSSL's, in place too;
    /// a flipped bit of ciphertext, tag, AAD or nonce fails and zeroes the output.
    @Test func eachImplementationIsOpenSSLsFunction() throws {
        let aadLengths = Array(0...70) + [255, 256, 257, 1000, 70_000]
        let lengths = [0, 1, 15, 16, 17, 31, 47, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 767, 768, 769,
                       1023, 4095, 4096, 65_537, (1 << 20) + 16, (1 << 20) + 31]
        let key = SecureRandom.bytes(32)
        let ciphers = try Self.implementations(key: key)
        #expect(ciphers.count == (Self.ipsecMBExpected ? 2 : 1))
        for i in 0..<max(aadLengths.count, lengths.count) {
            let aad = SecureRandom.bytes(aadLengths[i % aadLengths.count]), pt = SecureRandom.bytes(lengths[i % lengths.count])
            let nonce = SecureRandom.bytes(12)
            let theirs = try #require(AEADDifferentialTests.evp(.aes256GCM, seal: true, key: key, nonce: nonce, aad: aad, input: pt))
            for (name, cipher) in ciphers {
                let what = "\(name), aad \(aad.count), length \(pt.count)"
                #expect(try Self.seal(cipher, nonce: nonce, aad: aad, pt) == theirs, "\(what)")
                var buffer = theirs
                try Self.open(cipher, nonce: nonce, aad: aad, &buffer)
                #expect(Array(buffer[..<pt.count]) == pt, "\(what)")

                var flipped = theirs
                flipped[(i * 131 + 7) % flipped.count] ^= UInt8(1 << (i % 8))
                #expect(throws: CryptoError.authenticationFailed, "\(what)") { try Self.open(cipher, nonce: nonce, aad: aad, &flipped) }
                #expect(flipped[..<pt.count].allSatisfy { $0 == 0 }, "\(what)")
                var otherNonce = nonce
                otherNonce[i % 12] ^= 0x01
                buffer = theirs
                #expect(throws: CryptoError.authenticationFailed, "\(what)") { try Self.open(cipher, nonce: otherNonce, aad: aad, &buffer) }
                buffer = theirs
                #expect(throws: CryptoError.authenticationFailed, "\(what)") { try Self.open(cipher, nonce: nonce, aad: aad + [0], &buffer) }
                if !aad.isEmpty {
                    var otherAAD = aad
                    otherAAD[i % aad.count] ^= 0x80
                    buffer = theirs
                    #expect(throws: CryptoError.authenticationFailed, "\(what)") { try Self.open(cipher, nonce: nonce, aad: otherAAD, &buffer) }
                }
            }
        }
    }

    /// Every single-bit change of the tag fails: the comparison looks at all 16 bytes.
    @Test func everyBitOfTheTagCounts() throws {
        let key = SecureRandom.bytes(32), nonce = SecureRandom.bytes(12), pt = SecureRandom.bytes(100)
        let theirs = try #require(AEADDifferentialTests.evp(.aes256GCM, seal: true, key: key, nonce: nonce, aad: [], input: pt))
        for (name, cipher) in try Self.implementations(key: key) {
            for bit in 0..<128 {
                var sealed = theirs
                sealed[100 + bit / 8] ^= UInt8(1 << (bit % 8))
                #expect(throws: CryptoError.authenticationFailed, "\(name), bit \(bit)") { try Self.open(cipher, nonce: nonce, aad: [], &sealed) }
            }
        }
    }

    static func seal(_ c: any AEADCipher, nonce: [UInt8], aad: [UInt8], _ pt: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: pt.count + 16)
        try out.withUnsafeMutableBytes { o in try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in try pt.withUnsafeBytes { p in
            try c.seal(nonce: n, aad: a, input: p, output: UnsafeMutableRawBufferPointer(rebasing: o[..<pt.count]),
                       tag: UnsafeMutableRawBufferPointer(rebasing: o[pt.count...]))
        } } } }
        return out
    }

    /// Opens `sealed` (ciphertext || tag) in place, as a chunk is opened in its buffer.
    static func open(_ c: any AEADCipher, nonce: [UInt8], aad: [UInt8], _ sealed: inout [UInt8]) throws {
        let n = sealed.count - 16
        try sealed.withUnsafeMutableBytes { b in try nonce.withUnsafeBytes { nb in try aad.withUnsafeBytes { a in
            try c.open(nonce: nb, aad: a, input: UnsafeRawBufferPointer(rebasing: b[..<n]),
                       tag: UnsafeRawBufferPointer(rebasing: b[n...]), output: UnsafeMutableRawBufferPointer(rebasing: b[..<n]))
        } } }
    }
}

import Foundation
import Glibc
import Testing
@testable import VaultCrypto

/// HMACSHA256Lanes: many MACs at once, through libipsec-mb's SHA-NI lanes
/// where they run and OpenSSL's HMAC elsewhere and for what the lanes do
/// not take (empty messages, 65,535 bytes and more, keys over 64 bytes).
/// Each MAC must be the one OpenSSL's HMAC() gives for that message alone,
/// whatever else is in the batch, and the lanes must really be used where
/// this machine can, or these tests would check only OpenSSL against itself.
@Suite struct HMACLanesTests {
    static var lanesExpected: Bool {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") }),
              line.split(separator: " ").contains("sha_ni"),
              let lib = dlopen("libIPSec_MB.so.1", RTLD_NOW | RTLD_LOCAL) else { return false }
        dlclose(lib)
        return true
    }

    static func macs(_ lanes: HMACSHA256Lanes, _ messages: [[UInt8]]) throws -> [[UInt8]] {
        let buffers = messages.map { m -> UnsafeMutableRawBufferPointer in
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: m.count, alignment: 1)
            b.copyBytes(from: m)
            return b
        }
        defer { buffers.forEach { $0.deallocate() } }
        var out = [UInt8](repeating: 0xAA, count: 32 * messages.count)
        try out.withUnsafeMutableBytes { try lanes.authenticate(buffers.map { UnsafeRawBufferPointer($0) }, into: $0) }
        return messages.indices.map { Array(out[(32 * $0)..<(32 * $0 + 32)]) }
    }

    @Test func theLanesAreUsedWhereThisMachineHasThem() throws {
        #expect(IPSecMB.hmacAvailable == Self.lanesExpected)
        #expect((IPSecMB.Lanes() != nil) == Self.lanesExpected)
        #expect((IPSecMB.HMACKey(key: UnsafeRawBufferPointer(start: nil, count: 0)) != nil) == Self.lanesExpected)
    }

    /// Lengths around SHA-256's 64-byte block and its 55/56-byte padding
    /// edge, and around the lanes' limit, shuffled into batches of every
    /// size from one to 40; keys of 0 to 65 bytes (over 64: OpenSSL only).
    @Test(arguments: [0, 1, 32, 64, 65])
    func eachMACIsOpenSSLsForThatMessageAlone(keyLength: Int) throws {
        let secret = SecureRandom.bytes(keyLength)
        let lanes = HMACSHA256Lanes(try HMACSHA256Key(try secret.withUnsafeBytes { try SecretBytes(copying: $0) }))
        let edges = [0, 1, 2, 54, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 6000,
                     65_470, 65_533, 65_534, 65_535, 65_536, 100_000]
        var lengths = edges + (0..<200).map { _ in Int.random(in: 1...20_000) }
        lengths.shuffle()
        var start = 0, size = 1
        while start < lengths.count {
            let batch = lengths[start..<min(lengths.count, start + size)].map { SecureRandom.bytes($0) }
            let got = try Self.macs(lanes, batch)
            for (m, mac) in zip(batch, got) {
                #expect(mac == (try HMACSHA256.authenticate(key: secret, data: m)), "key \(keyLength), length \(m.count), batch of \(batch.count)")
            }
            start += size
            size = size % 40 + 1
        }
        #expect(try Self.macs(lanes, []) == [])
    }

    /// RFC 4231 section 4.3, test case 2, amid other messages.
    @Test func knownAnswerInABatch() throws {
        var jefe = Array("Jefe".utf8)
        let lanes = HMACSHA256Lanes(try HMACSHA256Key(try SecretBytes(consuming: &jefe)))
        let message = Array("what do ya want for nothing?".utf8)
        let got = try Self.macs(lanes, [SecureRandom.bytes(300), message, SecureRandom.bytes(5), message])
        let expected = [UInt8](hex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(got[1] == expected)
        #expect(got[3] == expected)
    }
}

import Testing
@testable import VaultCrypto

@Suite struct GuardedMemoryPoolTests {
    /// A recycled block comes back zeroed, and only for the same size.
    @Test func recycledBlocksAreZeroed() {
        for _ in 0..<50 {
            let a = SecretBytes.random(count: 48)
            #expect(a.bytes != [UInt8](repeating: 0, count: 48))
        }
        for _ in 0..<50 {
            #expect(SecretBytes(count: 48).bytes == [UInt8](repeating: 0, count: 48))
        }
        // Sizes above the pooled range still work.
        let big = SecretBytes.random(count: GuardedMemoryPool.largestPooledSize + 1)
        #expect(big.count == GuardedMemoryPool.largestPooledSize + 1)
        #expect(SecretBytes(count: 0).count == 0)
    }
}

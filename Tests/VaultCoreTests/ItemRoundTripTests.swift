import Dispatch
import Synchronization
import System
import Testing
import VaultCrypto
@testable import VaultCore

@Suite("Item cipher round trips")
struct ItemRoundTripTests {
    typealias F = ItemFixture

    @Test("content of many sizes comes back exactly",
          arguments: [0, 1, 7, 8, 100, F.M - 9, F.M - 8, F.M - 1, F.M, F.M + 1, 2 * F.M, 3 * F.M + 12345, 9 * F.M + 5, 17 * F.M])
    func roundTrip(size: Int) throws {
        let content = F.content(size, seed: UInt32(size) + 1)
        let sealed = try F.seal(content)
        let stream = ItemCipher.streamLength(contentLength: UInt64(size))
        #expect(UInt64(sealed.count) == ItemCipher.sealedLength(streamLength: stream))
        #expect(try F.open(sealed) == content)
    }

    @Test("batch size and thread count do not change the bytes")
    func deterministicAcrossThreads() throws {
        let content = F.content(5 * F.M + 77)
        let a = try F.seal(content, threads: 1, batch: 1)
        let b = try F.seal(content, threads: 2, batch: 3)
        let c = try F.seal(content, threads: 4, batch: 8)
        #expect(a == b && b == c)
    }

    @Test("an empty item is a single final chunk holding only padding and the trailer")
    func emptyItem() throws {
        let sealed = try F.seal([])
        #expect(sealed.count == F.H + 8 + 16)
        let r = try ItemReader(key: F.key(), source: MemoryBytes(sealed))
        #expect(r.chunkCount == 1 && r.contentLength == 0)
        #expect(try F.open(sealed) == [])
    }

    @Test("random access reads any chunk on its own")
    func randomAccess() throws {
        let content = F.content(4 * F.M + 999)
        let r = try ItemReader(key: F.key(), source: MemoryBytes(try F.seal(content)))
        for i in [3, 0, 4, 2, 1] as [UInt64] {
            let lo = Int(i) * F.M
            #expect(try r.readChunk(i) == Array(content[lo..<min(lo + F.M, content.count)]))
        }
    }

    /// A mounted folder's files share one reader: `readChunk` from many
    /// threads at once, each chunk right (each call its own AEAD context).
    @Test func readChunkFromManyThreadsAtOnce() throws {
        let content = F.content(6 * F.M + 4321, seed: 77)
        let r = try ItemReader(key: F.key(), source: MemoryBytes(try F.seal(content)))
        let wrong = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 48) { k in
            let i = UInt64(k % 7)
            let lo = Int(i) * F.M
            let want = Array(content[lo..<min(lo + F.M, content.count)])
            let got: [UInt8]? = k % 2 == 0 ? try? r.readChunk(i) : try? {
                let page = try PageBuffer(count: ItemCipher.sealedChunkSize)
                let n = try r.readChunk(i, into: page.raw)
                return Array(page.raw[..<n])
            }()
            if got != want { wrong.add(1, ordering: .relaxed) }
        }
        #expect(wrong.load(ordering: .relaxed) == 0)
    }

    @Test("consume(fd) reads a file straight into the slots and matches write()",
          arguments: [0, 5, 4 * F.M, 4 * F.M + 1, 8 * F.M, 10 * F.M + 3])
    func consumeFile(size: Int) throws {
        let content = F.content(size, seed: 9)
        let path = "/tmp/vault-test-consume-\(getpid())-\(size)"
        unlink(path)
        defer { unlink(path) }
        let f = try FileHandleFD(creating: path)
        try content.withUnsafeBytes { try f.write($0) }
        // Some bytes through write() first, the rest from the file.
        let head = F.content(3, seed: 10)
        let sink = MemoryBytes()
        let w = try ItemWriter(key: F.key(), header: F.header(), sink: sink, batchChunks: 4)
        try w.write(head)
        #expect(try w.consume(try FileHandleFD(readingFrom: path)) == UInt64(content.count))
        try w.finish()
        #expect(sink.bytes == (try F.seal(head + content)))
    }

    @Test("Padmé leaves O(log log L) bits and matches the paper's examples")
    func padme() {
        #expect(Padme.paddedLength(8) == 8)
        #expect(Padme.paddedLength(9) == 10)
        #expect(Padme.paddedLength(1000) == 1024)
        #expect(Padme.paddedLength(1 << 30) == 1 << 30)
        #expect(Padme.paddedLength((1 << 30) + 1) == (1 << 30) + (1 << 25))
        for l in stride(from: UInt64(2), to: 5_000_000, by: 9973) {
            let p = Padme.paddedLength(l)
            #expect(p >= l && Double(p - l) / Double(l) <= 0.12)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

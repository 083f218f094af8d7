import Synchronization
import Testing
import TestSupport
import VaultCrypto
@testable import VaultCore

/// PackChunks: many packs read in turn through one bounded cache of
/// chunks (issue 45): the bytes are the packs', each chunk is opened once
/// while fewer packs are read at once than there are slots, and damage is
/// the pack's `itemCorrupted`, never bytes.
@Suite("Pack chunks shared by every pack")
struct PackChunksTests {
    typealias F = ItemFixture

    /// A pack of `size` bytes sealed in memory, its entry, and a source that counts chunk reads.
    struct Pack {
        let content: [UInt8]
        var sealed: [UInt8]
        let entry: ManifestEntry
        let seed: UInt8
        init(_ seed: UInt8, size: Int, flags: ItemFlags = []) throws {
            self.seed = seed
            content = F.content(size, seed: UInt32(seed) + 7)
            let header = F.header(seed, flags: flags)
            sealed = try F.seal(content, key: F.key(seed), header: header)
            entry = try ManifestEntry(itemID: header.itemID, fileKey: F.key(seed), kind: .pack, origin: .droppedIn,
                                      mode: 0o600, size: UInt64(size), fileCount: 1, added: 0, modified: 0,
                                      name: "pack-" + Hex.encode(header.itemID))
        }
    }

    /// Counts the sealed bytes read from a source (chunks opened ahead read on other threads).
    final class Counting: ByteSource, @unchecked Sendable {
        let inner: MemoryBytes
        let count = Atomic<UInt64>(0)
        init(_ bytes: [UInt8]) { inner = MemoryBytes(bytes) }
        var size: UInt64 { inner.size }
        var read: UInt64 { count.load(ordering: .relaxed) }
        func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let n = try inner.read(at: offset, into: buffer)
            count.add(UInt64(n), ordering: .relaxed)
            return n
        }
    }

    @Test("twenty packs read in turn, each forward: the bytes are right and each chunk is opened once")
    func interleavedForwardReaders() throws {
        let packs = try (0..<20).map { try Pack(UInt8($0), size: 2 * F.M + 1000 * $0 + 17) }
        let sources = packs.map { Counting($0.sealed) }
        let cache = PackChunks(capacity: 32)
        var at = [UInt64](repeating: 0, count: packs.count)
        var rng = SplitMix(state: 45)
        var buffer = [UInt8](repeating: 0, count: 40000)
        // Round after round, a small piece from each pack in turn, as a restore of 40 days reads.
        while zip(at, packs).contains(where: { $0 < $1.entry.size }) {
            for (i, p) in packs.enumerated() where at[i] < p.entry.size {
                let n = Int(rng.next() % 40000) + 1
                let got = try buffer.withUnsafeMutableBytes { b in
                    // No read-ahead: a snapshot reader asks for it only while it reads one pack forward.
                    try cache.read(p.entry, at: at[i], into: UnsafeMutableRawBufferPointer(rebasing: b[..<n]), readAhead: 0) {
                        try ItemReader(key: F.key(p.seed), source: sources[i])
                    }
                }
                let end = min(Int(at[i]) + n, p.content.count)
                #expect(got == end - Int(at[i]))
                #expect(buffer[..<got] == p.content[Int(at[i])..<end])
                at[i] += UInt64(got)
            }
        }
        for (i, s) in sources.enumerated() {
            // Each chunk once, and the final chunk once more on opening: never a chunk again.
            let sealed = UInt64(packs[i].sealed.count)
            #expect(s.read <= sealed + UInt64(F.sealedM), "pack \(i): read \(s.read) of \(sealed) sealed bytes")
        }
    }

    @Test("one pack read forward with chunks opened ahead: the bytes are right and each chunk is opened once")
    func forwardWithReadAhead() throws {
        let p = try Pack(9, size: 9 * F.M + 333)
        let source = Counting(p.sealed)
        let cache = PackChunks(capacity: 8)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 300_000)
        while UInt64(out.count) < p.entry.size {
            let n = try buffer.withUnsafeMutableBytes {
                try cache.read(p.entry, at: UInt64(out.count), into: $0, readAhead: 3) { try ItemReader(key: F.key(9), source: source) }
            }
            out += buffer[..<n]
        }
        #expect(out == p.content)
        #expect(source.read <= UInt64(p.sealed.count) + UInt64(F.sealedM))
    }

    @Test("a flipped byte is the pack's itemCorrupted, and a compressed pack is refused")
    func damageIsThePacks() throws {
        var p = try Pack(1, size: 2 * F.M + 5)
        p.sealed[F.H + F.sealedM + 100] ^= 1   // in chunk 1
        let cache = PackChunks()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let open = { try ItemReader(key: F.key(1), source: MemoryBytes(p.sealed)) }
        // Chunk 0 is whole and reads.
        #expect(try buffer.withUnsafeMutableBytes { try cache.read(p.entry, at: 0, into: $0, readAhead: 2, open: open) } == 4096)
        #expect(throws: VaultError.itemCorrupted(name: p.entry.name)) {
            try buffer.withUnsafeMutableBytes { try cache.read(p.entry, at: UInt64(F.M + 10), into: $0, readAhead: 2, open: open) }
        }
        let zipped = try Pack(2, size: 5000, flags: [.zstd])
        #expect(throws: VaultError.itemCorrupted(name: zipped.entry.name)) {
            try buffer.withUnsafeMutableBytes {
                try cache.read(zipped.entry, at: 0, into: $0, readAhead: 2) { try ItemReader(key: F.key(2), source: MemoryBytes(zipped.sealed)) }
            }
        }
    }

    @Test("past the end there is nothing, and a pack shorter than its entry is damage")
    func bounds() throws {
        let p = try Pack(3, size: 1000)
        let cache = PackChunks()
        var buffer = [UInt8](repeating: 0, count: 64)
        let open = { try ItemReader(key: F.key(3), source: MemoryBytes(p.sealed)) }
        #expect(try buffer.withUnsafeMutableBytes { try cache.read(p.entry, at: 1000, into: $0, readAhead: 2, open: open) } == 0)
        #expect(try buffer.withUnsafeMutableBytes { try cache.read(p.entry, at: 990, into: $0, readAhead: 2, open: open) } == 10)
        var longer = p.entry
        longer.size = 2000
        let other = PackChunks()
        #expect(throws: VaultError.itemCorrupted(name: p.entry.name)) {
            try buffer.withUnsafeMutableBytes { try other.read(longer, at: 0, into: $0, readAhead: 2, open: open) }
        }
    }
}

import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultBackup

/// Pieces named, compressed and stored on other threads: stored in the
/// order they were handed in (offsets as one thread would give them), a
/// piece seen earlier in the run stored once, and the walk never more
/// than `maxInFlight` bytes ahead.
@Suite struct PiecePipelineTests {
    final class Scratch {
        let dir = NSTemporaryDirectory() + "piece-pipeline-" + UUID().uuidString
        let vault: Vault
        init() throws {
            var pw = Array("correct horse".utf8)
            _ = try VaultCore.Vault.create(at: dir, password: Password(secret: try SecretBytes(consuming: &pw)),
                                           kdf: try Argon2Parameters(memoryKiB: 1024, passes: 1, lanes: 1))
            vault = try Vault(at: dir)
        }
        deinit { try? FileManager.default.removeItem(atPath: dir) }   // a test's scratch; its loss changes nothing
    }

    static func random(_ n: Int) -> [UInt8] {
        Array(FileHandle(forReadingAtPath: "/dev/urandom")!.readData(ofLength: n))
    }

    @Test func piecesAreStoredInTheOrderHandedIn() throws {
        let s = try Scratch()
        let packs = try PackWriter(vault: s.vault, cache: nil, dryRun: false, landed: nil)
        let pipeline = try PiecePipeline(key: try PieceKey.random(), packs: packs, threads: 3)
        defer { pipeline.close() }
        let shared = Self.random(5000), text = Array(String(repeating: "pack piece tree ", count: 20_000).utf8)
        let a = PendingPieces(), b = PendingPieces(), c = PendingPieces()
        for (piece, file) in [(shared, a), (Self.random(70_000), a), (Self.random(3), b), (shared, b), (text, c)] {
            try piece.withUnsafeBytes { try pipeline.submit($0, of: file) }
        }
        #expect(try pipeline.drain([a, b, c]) == 1, "the shared piece is stored once")
        #expect(a.pieces[0] == b.pieces[1])
        #expect(a.size == 75_000 && b.size == 5003 && c.size == UInt64(text.count))
        let offsets = [a.pieces[0], a.pieces[1], b.pieces[0], c.pieces[0]].map(\.offset)
        #expect(offsets == offsets.sorted() && Set(offsets).count == 4, "\(offsets)")
        #expect(c.pieces[0].stored < c.pieces[0].count, "text is stored compressed")
        #expect(a.pieces[1].stored == a.pieces[1].count, "random bytes are stored as they are")
    }

    /// More than `maxInFlight` handed in at once: the submitter waits, and
    /// everything arrives, in order, each piece once.
    @Test func aLongRunStaysWithinItsBound() throws {
        let s = try Scratch()
        let packs = try PackWriter(vault: s.vault, cache: nil, dryRun: false, landed: nil)
        let pipeline = try PiecePipeline(key: try PieceKey.random(), packs: packs, threads: 2)
        defer { pipeline.close() }
        let block = Self.random(1 << 20)
        var files: [PendingPieces] = []
        for k in 0..<48 {
            let f = PendingPieces()
            var piece = block
            piece[0] = UInt8(k)   // each its own
            try piece.withUnsafeBytes { try pipeline.submit($0, of: f) }
            files.append(f)
        }
        #expect(try pipeline.drain(files) == 0)
        let refs = files.map { $0.pieces[0] }
        #expect(Set(refs.map(\.id)).count == 48)
        // Two packs at most (32 MiB each): within one, offsets follow the order.
        for pair in zip(refs, refs.dropFirst()) where pair.0.pack == pair.1.pack { #expect(pair.0.offset < pair.1.offset) }
        try packs.land()
    }
}

import Foundation
import Testing

/// `vault snapshots rewrite` (issue 44): a leaked secret taken out of every
/// snapshot and, with a purge, out of the packs: its bytes are searched
/// for in everything the vault holds, decrypted by the independent reader
/// (every item, every zstd frame in it), not taken on trust from counts.
@Suite struct SnapshotRewriteTests {
    static let secret = "aws_secret_access_key = LEAKED-\(UInt64.random(in: 0...UInt64.max))"
    let f: BackupFixture
    init() throws { f = try BackupFixture() }

    /// Everything the vault holds, decrypted (scripts/reference/vault_snapshot.py plaintext).
    func plaintext() throws -> Data {
        let out = f.v.path + "/plain-\(UUID().uuidString)"
        let r = try CLIHarness.run(["python3", ReferenceSnapshotTests.script, "plaintext", f.v.dir, f.v.passwordFile, out],
                                   environment: f.v.environment(["PYTHONDONTWRITEBYTECODE": "1"]), timeout: 120, executable: "/usr/bin/env")
        #expect(r.status == 0, "\(r.stderr)")
        defer { try? FileManager.default.removeItem(atPath: out) }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    func holds(_ text: String) throws -> Bool { try plaintext().range(of: Data(text.utf8)) != nil }

    /// Three days of backups of a home with a leaked key in it.
    func leak() throws -> [UInt8] {
        try f.mkdir(".aws")
        try f.mkdir("docs")
        try f.write(".aws/credentials", Array("[default]\n\(Self.secret)\n".utf8), mode: 0o600)
        let big = BackupFixture.random(2_000_000, seed: 3)
        try f.write("docs/big", big)
        for day in 0..<3 {
            try f.write("docs/day", Array("day \(day)\n".utf8))
            try f.backup()
        }
        #expect(try f.snapshots([]).status == 0)   // taken in
        #expect(try holds(Self.secret) && holds("credentials"))
        return big
    }

    @Test func aLeakIsGoneFromEverySnapshotAndFromThePacks() throws {
        let big = try leak()
        let r = try f.snapshots(["rewrite", "--exclude", ".aws/credentials", "--prune", "--grace", "0"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "taking '").count == 4, "\(r.stderr)")
        #expect(r.stderr.contains("repacked"), "\(r.stderr)")
        // Three snapshots still, with host, paths and files but the secret.
        let list = try JSONObject.parse(try f.snapshots(["list", "--json"]).stdout)["snapshots"] as? [[String: Any]] ?? []
        #expect(list.count == 3 && list.allSatisfy { $0["files"] as? Int == 2 }, "\(list)")
        #expect(try !holds(Self.secret), "the secret's bytes are still in the vault")
        #expect(try !holds("credentials"), "its name is still in a tree")
        // Everything else restores whole.
        #expect(try f.snapshots(["restore", "latest", "--to", f.v.path + "/out"]).status == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: f.v.path + "/out/src/docs/big"))) == big)
        #expect(!FileManager.default.fileExists(atPath: f.v.path + "/out/src/.aws/credentials"))
        #expect(try f.v.run(["check", "--read-data"]).status == 0)
    }

    /// Without --prune the packs keep it until a purging prune; with
    /// --keep the originals stay (and so does the secret).
    @Test func keepAndALaterPurge() throws {
        _ = try leak()
        let kept = try f.snapshots(["rewrite", "latest", "--exclude", "credentials", "--keep"])
        #expect(kept.status == 0 && kept.stderr.contains("the original is kept"), "\(kept.stderr)")
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 4)
        let all = try f.snapshots(["rewrite", "--exclude", "credentials"])
        #expect(all.status == 0 && all.stderr.contains("until a prune"), "\(all.stderr)")
        #expect(try holds(Self.secret), "no prune yet: still in a pack")
        // The usual rule keeps a pack that is mostly in use; a purge does not.
        #expect(try f.snapshots(["prune", "--grace", "0"]).status == 0)
        #expect(try holds(Self.secret), "the quarter-unused rule keeps the mostly used pack it is in")
        #expect(try f.snapshots(["prune", "--repack-unused", "--grace", "0"]).status == 0)
        #expect(try !holds(Self.secret))
    }

    /// A pattern that matches nothing changes nothing: the vault's files
    /// are the same bytes afterwards.
    @Test func noMatchChangesNothing() throws {
        _ = try leak()
        func inventory() throws -> [String: Data] {
            var out: [String: Data] = [:]
            for p in try FileManager.default.subpathsOfDirectory(atPath: f.v.dir) {
                var dir: ObjCBool = false
                if FileManager.default.fileExists(atPath: f.v.dir + "/" + p, isDirectory: &dir), !dir.boolValue {
                    out[p] = try Data(contentsOf: URL(fileURLWithPath: f.v.dir + "/" + p))
                }
            }
            return out
        }
        let before = try inventory()
        let r = try f.snapshots(["rewrite", "--exclude", "*.nothing", "--prune"])
        #expect(r.status == 0 && r.stderr.contains("nothing in any snapshot matches: nothing was changed"), "\(r.stderr)")
        #expect(try inventory() == before)
        let bad = try f.snapshots(["rewrite"])
        #expect(bad.status == 2 && bad.stderr.contains("say what to take out"), "\(bad.stderr)")
    }
}

import Foundation
import Testing

/// The independent Python reader (scripts/reference/vault_read.py, written
/// from docs/FORMAT.md alone) reads vaults the `vault` binary makes, and
/// agrees with `vault list --json` and `vault get` on every item.
@Suite struct ReferenceReaderTests {
    static let reader = CLIHarness.packageRoot + "/scripts/reference/vault_read.py"
    /// No __pycache__ left in scripts/reference by the test run.
    static let noBytecode = ["PYTHONDONTWRITEBYTECODE": "1"]

    /// One line of `vault_read.py list`: name, size, kind, origin (tab-separated).
    struct Line: Equatable, CustomStringConvertible {
        var name: String, size: UInt64, kind: String, origin: String
        var description: String { "\(name) \(size) \(kind) \(origin)" }
    }

    func python(_ args: [String], _ v: VaultFixture) throws -> CLIHarness.Result {
        try CLIHarness.run(["python3", Self.reader] + args, environment: v.environment(Self.noBytecode), timeout: 60,
                           executable: "/usr/bin/env")
    }

    func referenceList(_ v: VaultFixture) throws -> [Line] {
        let r = try python(["list", v.dir, v.passwordFile], v)
        #expect(r.status == 0, "vault_read.py list: \(r.stderr)")
        #expect(r.stderr == "")
        return r.stdoutText.split(separator: "\n").map { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Line(name: f[0], size: UInt64(f.count > 1 ? f[1] : "") ?? .max, kind: f.count > 2 ? f[2] : "",
                        origin: f.count > 3 ? f[3] : "")
        }
    }

    @Test func theReferenceReaderOpensEveryCodec() throws {
        let v = try VaultFixture()
        let text = Array((0..<220_000).map { "line \($0): the quick brown fox \($0 % 97)\n" }.joined().utf8)   // > 8 MiB: the first block is text
        let noise = randomBytes(9 << 20)
        // zstd (compressed blocks, then raw blocks inside it), zstd at a level, xz, off.
        let cases: [(String, [UInt8], [String])] = [
            ("mixed.bin", text + noise, []), ("text-zstd19.txt", text, ["--compression", "zstd:19"]),
            ("text-xz.txt", text, ["--compression", "xz:1"]), ("text-raw.txt", text, ["--compression", "off"]),
            ("empty.txt", [], []), ("one.txt", [7], []),
        ]
        for (name, content, options) in cases {
            #expect(try v.add(["add", try v.write(name, content)] + options).status == 0)
        }
        _ = try v.listed()
        for (name, content, _) in cases {
            let r = try python(["get", v.dir, v.passwordFile, name], v)
            #expect(r.status == 0 && r.stdout == content, "\(name): \(r.stderr)")
        }
    }

    @Test func theReferenceReaderAgreesWithTheCLI() throws {
        // The reader's own check of the FORMAT.md test vector first.
        let v = try VaultFixture(password: "réference pässwörd")  // NFC normalisation on both sides
        let vector = try python(["check-vector"], v)
        #expect(vector.status == 0, "\(vector.stdoutText)\(vector.stderr)")

        var contents: [String: [UInt8]] = [
            "big.bin": randomBytes(2 * 1024 * 1024 + 12_345),  // three chunks
            "empty": [],
            "notes.txt": Array("the reference reader reads this\n".utf8),
            "exactly-one-chunk": randomBytes(1024 * 1024 - 8),  // S fills one chunk exactly
            "to-remove.dat": randomBytes(5000),
            "old name.txt": Array("renamed later".utf8),
            "ünïcödé name.txt": Array("unicode".utf8),
        ]
        for (name, bytes) in contents.sorted(by: { $0.key < $1.key }) {
            let path = try v.write("src-\(contents.count)", bytes)
            let r = try v.add(["add", path, "--name", name])
            #expect(r.status == 0, "\(r.stderr)")
            try FileManager.default.removeItem(atPath: path)
        }
        #expect(try v.listed().count == contents.count)  // absorbed
        #expect(try v.run(["rename", "old name.txt", "new name.txt"]).status == 0)
        contents["new name.txt"] = contents.removeValue(forKey: "old name.txt")
        #expect(try v.run(["remove", "to-remove.dat"]).status == 0)
        contents.removeValue(forKey: "to-remove.dat")
        // One drop-in still waiting in the inbox.
        let waitingContent = randomBytes(70_000)
        let waitingPath = try v.write("waiting.bin", waitingContent)
        #expect(try v.add(["add", waitingPath]).status == 0)
        #expect(try v.info()["waiting_drop_ins"] as? Int == 1)

        // Before anything absorbs it: the reader sees the stored items and the waiting one.
        let before = try referenceList(v)
        #expect(try v.info()["waiting_drop_ins"] as? Int == 1, "the reference reader must not change the vault")
        var want = contents.map { Line(name: $0.key, size: UInt64($0.value.count), kind: "file", origin: "dropped-in") }
        want.append(Line(name: "waiting.bin", size: 70_000, kind: "file", origin: "dropped-in (waiting)"))
        #expect(before.sorted { $0.name < $1.name } == want.sorted { $0.name < $1.name })
        let early = try python(["get", v.dir, v.passwordFile, "waiting.bin"], v)
        #expect(early.status == 0)
        #expect(early.stdout == waitingContent)

        // `vault list` absorbs it; both readers then agree on everything.
        contents["waiting.bin"] = waitingContent
        let cli = try v.listed()
        #expect(Set(cli.map(\.name)) == Set(contents.keys))
        let after = try referenceList(v)
        #expect(after.count == cli.count)
        for item in cli {
            let line = after.first { $0.name == item.name }
            #expect(line == Line(name: item.name, size: item.size, kind: item.kind, origin: item.origin), "\(item.name)")
        }
        for (name, bytes) in contents {
            let fromPython = try python(["get", v.dir, v.passwordFile, name], v)
            #expect(fromPython.status == 0, "\(name): \(fromPython.stderr)")
            let fromCLI = try v.get(name)
            #expect(fromCLI.status == 0)
            #expect(fromPython.stdout == fromCLI.stdout, "\(name)")
            #expect(fromCLI.stdout == bytes, "\(name)")
        }
        // Removed and old names are gone for both.
        for gone in ["to-remove.dat", "old name.txt"] {
            #expect(try python(["get", v.dir, v.passwordFile, gone], v).status == 1)
            #expect(try v.get(gone).status == 16)
        }
        // And a wrong password is told apart by both.
        let wrong = try v.sandbox.file("wrong", "wrong\n")
        let r = try CLIHarness.run(["python3", Self.reader, "list", v.dir, wrong], environment: v.environment(Self.noBytecode),
                                   executable: "/usr/bin/env")
        #expect(r.status == 1)
        #expect(r.stderr == "vault_read: wrong password\n")
    }

    /// After a password change the reference reader opens the vault with the
    /// new password only (the re-wrapped header follows FORMAT.md too).
    @Test func theReferenceReaderFollowsAPasswordChange() throws {
        let v = try VaultFixture()
        try v.write("a", Array("alpha".utf8))
        #expect(try v.add(["add", "a"]).status == 0)
        let newFile = try v.sandbox.file("new", "the new one\n")
        #expect(try v.run(["passwd", "--new-password-file", newFile]).status == 0)
        let old = try python(["list", v.dir, v.passwordFile], v)
        #expect(old.status == 1)
        let new = try python(["get", v.dir, newFile, "a"], v)
        #expect(new.status == 0)
        #expect(new.stdout == Array("alpha".utf8))
    }
}

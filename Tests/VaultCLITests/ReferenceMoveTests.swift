import Foundation
import Testing
import VaultCrypto
@testable import VaultCore
@testable import VaultMove

/// The independent Python sender (scripts/reference/vault_move.py, written
/// from docs/FORMAT.md "Device move" alone) moves a vault to the `vault`
/// binary's `move receive` over 127.0.0.1: code, handshake, SAS, transfer
/// and receipt all agree with the Swift side.
@Suite struct ReferenceMoveTests {
    static let script = CLIHarness.packageRoot + "/scripts/reference/vault_move.py"
    /// No __pycache__ left in scripts/reference by the test run.
    static let noBytecode = ["PYTHONDONTWRITEBYTECODE": "1"]

    /// python3 with the `cryptography` package is there (else the tests are skipped).
    static let pythonUsable: Bool = {
        let r = try? CLIHarness.run(["python3", "-c", "import cryptography.hazmat.primitives.asymmetric.x25519"],
                                    environment: CLIHarness.environment(home: NSTemporaryDirectory()), timeout: 30,
                                    executable: "/usr/bin/env")
        return r?.status == 0
    }()

    func python(_ args: [String], _ v: VaultFixture, stdin: [UInt8] = []) throws -> CLIHarness.Result {
        try CLIHarness.run(["python3", Self.script] + args, stdin: stdin, environment: v.environment(Self.noBytecode),
                           cwd: v.path, timeout: 60, executable: "/usr/bin/env")
    }

    /// The six digits after "security code: " on a line of `stderr`.
    static func sas(_ stderr: String) -> String? {
        guard let range = stderr.range(of: #"security code: [0-9]{6}"#, options: .regularExpression) else { return nil }
        return String(stderr[range].suffix(6))
    }

    /// Every regular file under `dir` (relative path) with its SHA-256,
    /// without the machine's own files (`lock`, `owner.lock`, `attempts`),
    /// which do not move.
    static func movableFiles(_ dir: String) throws -> [String: String] {
        var out: [String: String] = [:]
        let e = FileManager.default.enumerator(atPath: dir)
        while let rel = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue,
                  // The machine's own files (a replica id belongs to its directory): never moved.
                  !["lock", "owner.lock", "attempts", "replica"].contains(rel) else { continue }
            out[rel] = try sha256(file: dir + "/" + rel)
        }
        return out
    }

    /// `vault_move.py code FILE`, parsed.
    func decodedCode(_ file: String, _ v: VaultFixture) throws -> [String: Any] {
        let r = try python(["code", file], v)
        #expect(r.status == 0, "vault_move.py code: \(r.stderr)")
        return try JSONObject.parse(r.stdout)
    }

    @Test(.enabled(if: pythonUsable, "needs python3 with the cryptography package"))
    func theReferenceSenderMovesAVault() throws {
        let v = try VaultFixture()
        // The script's own check of the FORMAT.md vectors first.
        let vector = try python(["check-vector"], v)
        #expect(vector.status == 0, "\(vector.stdoutText)\(vector.stderr)")

        // Two stored items (one over 4 MiB: two data messages) and a waiting drop-in.
        let contents: [String: [UInt8]] = [
            "notes.txt": Array("moved by the reference sender\n".utf8),
            "big.bin": randomBytes(5 * 1024 * 1024 + 321),
            "waiting.txt": Array("still in the inbox when moved".utf8),
        ]
        for name in ["notes.txt", "big.bin"] {
            let path = try v.write(name, contents[name]!)
            #expect(try v.add(["add", path]).status == 0)
        }
        #expect(try v.run(["list"]).status == 0)  // absorbs the two
        #expect(try v.add(["add", "-", "--name", "waiting.txt"], stdin: contents["waiting.txt"]!).status == 0)
        #expect(try v.info()["waiting_drop_ins"] as? Int == 1)
        let sent = try Self.movableFiles(v.dir)
        #expect(sent.keys.filter { $0.hasPrefix("inbox/") }.count == 2, "\(sent.keys.sorted())")

        let target = v.path + "/moved"
        let (receiver, code, codeFile) = try MoveCommandTests.receiver(v, into: target)  // verifies with the password
        defer { receiver.killGroup() }

        // Python's reading of the code agrees with Swift's.
        let decoded = try decodedCode(codeFile, v)
        #expect(decoded["addresses"] as? [String] == ["127.0.0.1"])
        #expect((decoded["port"] as? NSNumber)?.intValue == Int(code.port))
        #expect(decoded["token"] as? String == code.token.map { String(format: "%02x", $0) }.joined())
        #expect((decoded["version"] as? NSNumber)?.intValue == 2 && code.handshake == .hybrid)
        #expect(decoded["receiver_key_hash"] as? String == code.receiverKey.bytes.map { String(format: "%02x", $0) }.joined())

        let s = try python(["send", v.dir, codeFile], v)
        #expect(s.status == 0, "vault_move.py send: \(s.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        #expect(Self.sas(s.stderr) != nil, "\(s.stderr)")
        #expect(Self.sas(s.stderr) == Self.sas(receiver.stderr), "sender: \(s.stderr)\nreceiver: \(receiver.stderr)")
        #expect(receiver.stderr.contains("kept its copy"), "\(receiver.stderr)")

        // Byte for byte the files the spec says move, the waiting drop-in
        // included. The receiver's check unlocks the staged vault, and an
        // unlock absorbs waiting drop-ins ("Drop-in envelope", Absorbing):
        // so the drop-in's blob arrives as items/<id> and the manifest is
        // rewritten; every other file is as sent.
        var expected: [String: String] = [:]
        for (rel, hash) in sent where rel != "manifest" && !rel.hasSuffix(".env") {
            expected[rel.hasPrefix("inbox/") ? "items/" + rel.dropFirst(6).dropLast(5) : rel] = hash
        }
        var received = try Self.movableFiles(target)
        #expect(received.removeValue(forKey: "manifest") != nil)
        #expect(received == expected, "sent \(sent.keys.sorted()), received \(received.keys.sorted())")

        // The moved vault opens and holds the same items (the drop-in is
        // absorbed on both sides by `list`) with the same bytes.
        func atTarget(_ args: [String]) throws -> CLIHarness.Result {
            try CLIHarness.run(["--vault", target, "--password-file", v.passwordFile] + args,
                               environment: v.environment(), cwd: v.path)
        }
        let listed = try atTarget(["list", "--json"])
        #expect(listed.status == 0, "list: \(listed.stderr)")
        let moved = try ListedItem.parse(listed.stdout).sorted { $0.name < $1.name }
        #expect(moved.map(\.name) == contents.keys.sorted())
        // The kept copy is a fork of the same vault, and the target's absorb
        // made its manifest newer; the rollback memory is per directory, so
        // the kept copy, in its own directory, is no rollback.
        let kept = try v.run(["list", "--json"])
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(moved == (try ListedItem.parse(kept.stdout)).sorted { $0.name < $1.name }, "the sender kept an identical vault")
        for (name, bytes) in contents {
            let got = try atTarget(["get", name])
            #expect(got.status == 0, "\(name): \(got.stderr)")
            #expect(got.stdout == bytes, "\(name)")
        }
        #expect(try atTarget(["check", "--read-data"]).status == 0)
    }

    @Test(.enabled(if: pythonUsable, "needs python3 with the cryptography package"))
    func aCodeWithAnotherTokenIsRefused() throws {
        let v = try VaultFixture()
        let path = try v.write("a.txt", Array("alpha\n".utf8))
        #expect(try v.add(["add", path]).status == 0)
        #expect(try v.run(["list"]).status == 0)

        let target = v.path + "/moved"
        let (receiver, code, codeFile) = try MoveCommandTests.receiver(v, into: target)
        defer { receiver.killGroup() }

        // Re-encode the code with one token bit flipped (text form, checksum
        // and all, by the script from the spec); Swift reads it back.
        var fields = try decodedCode(codeFile, v)
        var token = code.token
        token[0] ^= 0x01
        fields["token"] = token.map { String(format: "%02x", $0) }.joined()
        let encoded = try python(["encode"], v, stdin: Array(try JSONSerialization.data(withJSONObject: fields)))
        #expect(encoded.status == 0, "vault_move.py encode: \(encoded.stderr)")
        let text = encoded.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        let altered = try MoveCode(text: text)
        #expect(altered.token == token)
        #expect(altered.port == code.port && altered.receiverKey == code.receiverKey)
        let badFile = try v.sandbox.file("bad-code", text + "\n")

        let s = try python(["send", v.dir, badFile], v)
        #expect(s.status != 0)
        #expect(s.stderr.contains("corrupted or tampered"), "\(s.stderr)")
        #expect(Self.sas(s.stderr) == nil, "no SAS before the receiver confirmed")
        try MoveCommandTests.expectNothingAt(target)
        try MoveCommandTests.expectIntact(v, items: 1)

        // The same with one bit of the receiver key's hash flipped: the
        // reference sender reads the receiver's X-Wing key, finds that it
        // does not match, and sends nothing.
        var hashed = try decodedCode(codeFile, v)
        var hash = code.receiverKey.bytes
        hash[31] ^= 0x80
        hashed["receiver_key_hash"] = hash.map { String(format: "%02x", $0) }.joined()
        let reencoded = try python(["encode"], v, stdin: Array(try JSONSerialization.data(withJSONObject: hashed)))
        #expect(reencoded.status == 0, "vault_move.py encode: \(reencoded.stderr)")
        let otherHash = reencoded.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try MoveCode(text: otherHash).receiverKey == .xwingHash(hash))
        let hashFile = try v.sandbox.file("bad-hash", otherHash + "\n")
        let h = try python(["send", v.dir, hashFile], v)
        #expect(h.status != 0)
        #expect(h.stderr.contains("corrupted or tampered: the receiver's key does not match the move code"), "\(h.stderr)")
        #expect(Self.sas(h.stderr) == nil)
        try MoveCommandTests.expectNothingAt(target)

        // Two failed attempts of three: the receiver still waits, and the
        // genuine code then moves the vault (so the token and hash were the refusals' cause).
        #expect(receiver.poll() == nil, "receiver: \(receiver.stderr)")
        let good = try python(["send", v.dir, codeFile], v)
        #expect(good.status == 0, "vault_move.py send: \(good.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        #expect(Self.sas(good.stderr) == Self.sas(receiver.stderr))
    }
}

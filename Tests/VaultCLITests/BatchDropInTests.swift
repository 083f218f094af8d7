import Foundation
import Testing
import VaultCrypto
@testable import VaultCore

/// `vault add` of many files: one batch envelope per group of up to 128
/// drop-ins (docs/FORMAT.md, "Batch envelopes"), through the built binary.
@Suite("Batch drop-ins")
struct BatchDropInTests {
    let v: VaultFixture
    init() throws { v = try VaultFixture() }

    var inbox: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox")) ?? []).sorted() }

    /// Adds `count` files f000… of distinct contents; returns the contents by name.
    func addFiles(_ count: Int) throws -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        var paths: [String] = []
        for i in 0..<count {
            let name = String(format: "f%03d", i)
            contents[name] = Array("file \(i) ".utf8) + randomBytes(i * 37 % 900)
            paths.append(try v.write(name, contents[name]!))
        }
        let r = try v.add(["add"] + paths)
        #expect(r.status == 0, "\(r.stderr)")
        return contents
    }

    /// Adds three files (one batch) and flips the last byte of one content
    /// (its tag); returns that content's name.
    func addThreeAndDamageOne() throws -> String {
        _ = try addFiles(3)
        let damaged = try #require(inbox.first { $0.hasSuffix(".item") })
        let url = URL(fileURLWithPath: v.dir + "/inbox/" + damaged)
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count - 1] ^= 1
        try bytes.write(to: url)
        return damaged
    }

    @Test func anAddOfManyFilesLandsOneEnvelopePerGroupOf128() throws {
        let contents = try addFiles(130)
        let envelopes = inbox.filter { $0.hasSuffix(".env") }
        #expect(envelopes.count == 2)
        #expect(inbox.count == 132)
        // Every content is paired with an envelope by name: <batch>.<id>.item.
        for name in inbox where name.hasSuffix(".item") {
            #expect(name.utf8.count == 70 && envelopes.contains(String(name.prefix(32)) + ".env"), "\(name)")
        }
        #expect(try v.info()["waiting_drop_ins"] as? Int == 130)
        // The independent reader lists them waiting, from the spec alone.
        let reference = try CLIHarness.run(["python3", ReferenceReaderTests.reader, "list", v.dir, v.passwordFile],
                                           environment: v.environment(ReferenceReaderTests.noBytecode), timeout: 60,
                                           executable: "/usr/bin/env")
        #expect(reference.status == 0, "\(reference.stderr)")
        #expect(reference.stdoutText.split(separator: "\n").filter { $0.hasSuffix("dropped-in (waiting)") }.count == 130)
        // The next unlock takes all of them in and empties the inbox.
        let listed = try v.listed()
        #expect(listed.count == 130)
        #expect(inbox.isEmpty)
        for name in ["f000", "f077", "f129"] {
            let got = try v.get(name)
            #expect(got.status == 0 && got.stdout == contents[name], "\(name)")
        }
    }

    /// One content that does not open keeps its batch's envelope (and is
    /// reported); the others are absorbed; check --repair sets the envelope
    /// and that content aside, and nothing else.
    @Test func aDamagedContentKeepsItsEnvelopeAndTheRestIsAbsorbed() throws {
        let damaged = try addThreeAndDamageOne()
        let list = try v.run(["list"])
        #expect(list.status == 0)
        #expect(list.stderr.contains("cannot be opened") || list.stderr.contains("could not be opened"), "\(list.stderr)")
        // Saved, not only taken in: a reader that does not absorb sees them.
        let reference = try CLIHarness.run(["python3", ReferenceReaderTests.reader, "list", v.dir, v.passwordFile],
                                           environment: v.environment(ReferenceReaderTests.noBytecode), timeout: 60,
                                           executable: "/usr/bin/env")
        #expect(reference.stdoutText.split(separator: "\n").filter { $0.hasSuffix("\tdropped-in") }.count == 2,
                "\(reference.stdoutText)")
        let envelope = try #require(inbox.first { $0.hasSuffix(".env") })
        #expect(inbox == [envelope, damaged].sorted())
        let repair = try v.run(["check", "--repair"])
        #expect(inbox.isEmpty, "\(repair.stderr)")
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: v.dir + "/quarantine").sorted()
        #expect(quarantined == [envelope, damaged].sorted())
        #expect(try v.listed().count == 2)
    }

    /// Contents whose batch envelope never landed are leftovers: reported,
    /// then removed by the next writer.
    @Test func contentsWithoutTheirBatchEnvelopeAreLeftovers() throws {
        _ = try addFiles(3)
        let envelope = try #require(inbox.first { $0.hasSuffix(".env") })
        try FileManager.default.removeItem(atPath: v.dir + "/inbox/" + envelope)
        #expect(try v.info()["waiting_drop_ins"] as? Int == 0)
        #expect(try v.info()["leftover_files"] as? Int == 3)
        let list = try v.run(["list"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(inbox.isEmpty)
        #expect(try v.listed().isEmpty)
    }

    /// Batches whoever can write the inbox seals to the vault's real key,
    /// under its own file keys: a pack in a batch, one item id twice. Each
    /// is refused whole and changes nothing but the report.
    @Test(arguments: ["pack", "twice"])
    func aHostileBatchIsRefusedWhole(_ what: String) throws {
        var first = HostileDropIn(), second = HostileDropIn()
        first.size = 4
        second.size = 4
        if what == "pack" { second.kind = ItemKind.pack.rawValue }
        if what == "twice" { second.itemID = first.itemID }
        let header = try VaultHeader(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))))
        let batch = Hex.encode(SecureRandom.bytes(16))
        let envelope = try DropInEnvelope.seal(payload: [0, 2] + first.payload + second.payload, to: header.publicKey,
                                               vaultID: header.vaultID, batch: true)
        try Data(envelope).write(to: URL(fileURLWithPath: v.dir + "/inbox/\(batch).env"))
        for d in [first, second] {
            try Data(try d.item(Array("evil".utf8))).write(to: URL(fileURLWithPath: v.dir + "/inbox/\(batch).\(d.blob).item"))
        }
        let before = inbox
        let list = try v.run(["list"])
        #expect(list.status == 0 && list.status < 128, "\(list.stderr)")
        #expect(list.stderr.contains("could not be opened"), "\(list.stderr)")
        let check = try v.run(["check"])
        #expect(check.stderr.contains("cannot be opened: inbox/\(batch).env"), "\(check.stderr)")
        #expect(try v.listed().isEmpty)
        #expect(inbox == before)
    }

    /// A vault whose inbox holds a batch (here one the sender's absorb
    /// refused) moves whole: the receiver gets the envelope and the content
    /// under their 70-character names.
    @Test func aWaitingBatchMovesWithTheVault() throws {
        let damaged = try addThreeAndDamageOne()
        #expect(try v.listed().count == 2)
        let waiting = inbox
        let target = v.path + "/moved"
        // No check at the receiver: its unlock would absorb, and the inbox
        // compared is then what was sent.
        let (receiver, _, codeFile) = try MoveCommandTests.receiver(v, into: target, ["--no-verify"])
        defer { receiver.killGroup() }
        let send = try MoveCommandTests.send(v, codeFile: codeFile)
        #expect(send.status == 0, "send: \(send.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: target + "/inbox")) ?? []).sorted() == waiting)
        let moved = try CLIHarness.run(["--vault", target, "--password-file", v.passwordFile, "list"],
                                       environment: v.environment(), cwd: v.path)
        #expect(moved.status == 0 && moved.stdoutText.split(separator: "\n").count == 4, "\(moved.stderr)")
    }
}

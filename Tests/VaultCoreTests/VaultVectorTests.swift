import Foundation
import Testing
import TestSupport
@testable import VaultCrypto
@testable import VaultCore

/// The vault-format test vectors published in docs/FORMAT.md ("Test vector:
/// a complete vault"): fixed inputs, every derived key and every file's exact
/// bytes. Run with VAULT_PRINT_VECTORS=1 to print them.
@Suite("Vault format vectors")
struct VaultVectorTests {
    static func seq(_ from: UInt8, _ n: Int) -> [UInt8] { (0..<n).map { from &+ UInt8($0) } }
    static func secret(_ b: [UInt8]) -> SecretBytes { var c = b; return try! SecretBytes(consuming: &c) }
    static func bytes(_ s: SecretBytes) -> [UInt8] { s.withUnsafeBytes { Array($0) } }

    static let password = "correct horse battery staple"
    static let salt = seq(0x10, 16), vaultID = seq(0x20, 16), vmk = seq(0x40, 32), wrapNonce = seq(0x60, 12)
    static let itemID = seq(0x70, 16), fileKey = seq(0x80, 32), manifestNonce = seq(0x90, 12)
    static let ephemeral = seq(0xa0, 32), noncePrefix = seq(0xc0, 8)
    static let kdf = try! Argon2Parameters(memoryKiB: 256, passes: 2, lanes: 1)

    static func entry() throws -> ManifestEntry {
        try ManifestEntry(itemID: itemID, fileKey: FileKey(secret: secret(fileKey)), kind: .file, origin: .droppedIn,
                          mode: 0o644, size: 12, fileCount: 1, added: 1_767_225_600, modified: 1_767_139_200,
                          name: "hello.txt")
    }

    /// The version 3 vector: "hello.txt" version 1 (the entry above) and
    /// version 2 (item id d0…df, file key e0…ff, origin 0, mode 0o600,
    /// size 5, added = modified = 1767312000), generation 2.
    static func versionedManifest() throws -> Manifest {
        var second = try ManifestEntry(itemID: seq(0xd0, 16), fileKey: FileKey(secret: secret(seq(0xe0, 32))), kind: .file,
                                       origin: .unlocked, mode: 0o600, size: 5, fileCount: 1, added: 1_767_312_000,
                                       modified: 1_767_312_000, name: "hello.txt")
        second.version = 2
        var m = try Manifest(entries: [entry(), second])
        m.generation = 2
        return m
    }

    /// The same two versions in format version 4, version 1 dropped in by
    /// uid 1001 ("ncshare") through a shared inbox; generation 3.
    static func droppedManifest() throws -> Manifest {
        var m = try versionedManifest()
        var entries = m.entries
        entries[0].droppedBy = Dropper(uid: 1001, name: "ncshare")
        m = try Manifest(entries: entries)
        m.generation = 3
        return m
    }

    /// The version 5 vector (FORMAT.md): the version 4 manifest, generation
    /// 4, with a history of two replicas, one tombstone and one prune mark.
    static func historyManifest() throws -> Manifest {
        var m = try droppedManifest()
        m.generation = 4
        for _ in 0..<3 { try m.history.advance(replica: seq(0xa0, 16), tag: seq(0xb0, 8)) }
        try m.history.advance(replica: seq(0xc0, 16), tag: seq(0xd0, 8))
        m.tombstones.insert(seq(0xe0, 16), at: 1_767_398_400, digest: [UInt8](repeating: 0, count: 16))
        m.pruneMarks[seq(0xf0, 16)] = PruneMarks.Mark(since: 1_767_484_800, needed: 4096)
        return m
    }

    /// The version 6 vector (FORMAT.md): the version 5 manifest, generation
    /// 5, its tombstone with the digest `hello.txt`'s entry would leave.
    static func digestManifest() throws -> Manifest {
        var m = try historyManifest()
        m.generation = 5
        m.tombstones = Tombstones()
        m.tombstones.insert(seq(0xe0, 16), at: 1_767_398_400, digest: try entry().tombstoneDigest)
        return m
    }

    /// The version 7 vector (FORMAT.md): the version 6 manifest, generation
    /// 6, with one forgotten host, record name 0a…19, since 1767571200.
    static func forgottenManifest() throws -> Manifest {
        var m = try digestManifest()
        m.generation = 6
        m.forgottenHosts.insert(seq(0x0a, 16), at: 1_767_571_200)
        return m
    }

    static let expected: [String: String] = [
        "kek": "3e9d247a8213bb3bafc601ff1f97abd551c11280af85a9a3344022c68ccad40e",
        "header mac key": "051c61920203c1de12436bfecd8c1b583d2f82942752c2cfef1100705e0cdd43",
        "manifest key": "b1fc74e6e38ef5bdadc9fad96a840504a12f1e8ae811b30965a42a07a76dbcb4",
        "x25519 private key": "629b4b9b7506ed13c4075331d0cc6538d592bbbcf8912a7a44b2a141b95cd31c",
        "x25519 public key": "0eefe759c78604cc48b2780fc54f13574d11ce1bea1e6292a33b92299f173645",
        "vault.header": "5641554c5448445201010101202122232425262728292a2b2c2d2e2f0000010000000002000000011011121314151617" +
            "18191a1b1c1d1e1f606162636465666768696a6bf360a4260e9b483c56dabedccce6623ed694c66db9cfff25e32961cf" +
            "65f2598853d5c991260c8bdd8c432176f009c54b0eefe759c78604cc48b2780fc54f13574d11ce1bea1e6292a33b9229" +
            "9f17364500002ea70675c539ab1cc450102d40932d5a5387e934f91a6f95de6441847bd6c2c9",
        "manifest": "5641554c544d414e020000000000000000000001909192939495969798999a9bc38c272a7a081049e807c36911ef4807" +
            "e4d929f6c43464f0eec82d96024f8ffcf11c573e0d3213471bae00064d1a24b65e0b17b6a5e66a084354b95dc518ba81" +
            "74ff46688bb16dd25cbdde5f099243c9b418d4c454fbb502167c55b5b6ca0984a5277d2e83c24656c1d515da1606f29a" +
            "42f1c7",
        "manifest v3": "5641554c544d414e030000000000000000000002909192939495969798999a9bc38c27290a79623bec03c76d1de3440b" +
            "e0dd2df238c8980ceacc29920e4383f0f518533a112e0f5b1faa0402411628ba5a0f13b2397af5334355b8f9c518ba8d" +
            "74ff46648bb16dd35cbdde5e60c7fac9dd4d6dc43dafd2827f215a50daaf0ecfbd3366d6b70e82162ad1e44a465d9186" +
            "947612349cb25ff529f6a8e476e66e91ba9b48ae94f50d2f7b41c5ceb7b50cb3d88c5ca4ae1886162ef0e73385f12bc8" +
            "c191ec929b01d5a5875a3372a472cec8600b6fc2ec64c70dc77339d101f0a5744c45366d9f371a6641bd4df10b220d26" +
            "4e4e27542a9a575a50fe",
        "manifest v4": "5641554c544d414e040000000000000000000003909192939495969798999a9bc38c27290a79623b9d72b51d80915c1f" +
            "ebcc36fb21c597011939de67fdbe7c0d06eda4cfe22300560cbf1317520b37a7491a04a72a77fa3ed0c02ccb52802317" +
            "ef63dbf614b16cd2f8bdde5f60c7fac9b818d4c43dafd28217753dd0dacf3313d15f09f8c31fa271aad1eff2f2e32e3d" +
            "6fd4bd984568842bf4f8a6d644d058a388a5769ca6c33b1d494fcbdca5a31aa1ca9242b6bc0e90043cfee9c176045e3e" +
            "3669156860fd2d5b785a33732472cfc8600b6fabbe6e470dc77339b857fa25744544040b7358341239a053f7f1e38d13" +
            "ded82616f4872562b4c6066e62032c1bbe56955d26578839",
        "manifest v5": "5641554c544d414e050000000000000000000004909192939495969798999a9bc38c27290a79623b9d72b51d80915c1f" +
            "ebcc36fb21c597011939de67fdbe7c0d06eda4cfe22300560cbf1317520b37a7491a04a72a77fa3ed0c02ccb52802317" +
            "ef63dbf614b16cd2f8bdde5f60c7fac9b818d4c43dafd28217753dd0dacf3313d15f09f8c31fa271aad1eff2f2e32e3d" +
            "6fd4bd984568842bf4f8a6d644d058a388a5769ca6c33b1d494fcbdca5a31aa1ca9242b6bc0e90043cfee9c176045e3e" +
            "3669156860fd2d5b785a33732472cfc8600b6fabbe6e470dc77339b857fa25744544040b7358341239a053f7f1e38d13" +
            "ded82616f487256281d783641365ea0fe8b6e5e3bfbb9f577b7ea68e72d16a2a13dc01c7b46c19aecf06e64afe33f392" +
            "6c3dfb6c2981707c05d2d756d8c08fc18bd6ae283579f2a434acbd50993f946345e0e61ae173535b9dfb2077f88e2d8d" +
            "5287319c8abd9f09d616c507093217f64c777364022f72aafb40b3fbd3f9471cbf4f088d1cf751265b8c113cf576d268" +
            "6b72ec99e3b1eb490c02",
        "manifest v6": "5641554c544d414e060000000000000000000005909192939495969798999a9bc38c27290a79623b9d72b51d80915c1f" +
            "ebcc36fb21c597011939de67fdbe7c0d06eda4cfe22300560cbf1317520b37a7491a04a72a77fa3ed0c02ccb52802317" +
            "ef63dbf614b16cd2f8bdde5f60c7fac9b818d4c43dafd28217753dd0dacf3313d15f09f8c31fa271aad1eff2f2e32e3d" +
            "6fd4bd984568842bf4f8a6d644d058a388a5769ca6c33b1d494fcbdca5a31aa1ca9242b6bc0e90043cfee9c176045e3e" +
            "3669156860fd2d5b785a33732472cfc8600b6fabbe6e470dc77339b857fa25744544040b7358341239a053f7f1e38d13" +
            "ded82616f487256281d783641365ea0fe8b6e5e3bfbb9f577b7ea68e72d16a2a13dc01c7b46c19aecf06e64afe33f392" +
            "6c3dfb6c2981707c05d2d756d8c08fc18bd6ae283579f2a434acbd50993f946345e0e61ae173535b9dfb2077f88e2d8d" +
            "5287319c8abd3de57d519139cf37448aceafa6ab1a638e5705be430a210adab0e438f074e60caddbb57392191ed02b95" +
            "ff986edf54f61d4e793b609bfe13850420b3737187b2703e839c",
        "manifest v7": "5641554c544d414e070000000000000000000006909192939495969798999a9bc38c27290a79623b9d72b51d80915c1f" +
            "ebcc36fb21c597011939de67fdbe7c0d06eda4cfe22300560cbf1317520b37a7491a04a72a77fa3ed0c02ccb52802317" +
            "ef63dbf614b16cd2f8bdde5f60c7fac9b818d4c43dafd28217753dd0dacf3313d15f09f8c31fa271aad1eff2f2e32e3d" +
            "6fd4bd984568842bf4f8a6d644d058a388a5769ca6c33b1d494fcbdca5a31aa1ca9242b6bc0e90043cfee9c176045e3e" +
            "3669156860fd2d5b785a33732472cfc8600b6fabbe6e470dc77339b857fa25744544040b7358341239a053f7f1e38d13" +
            "ded82616f487256281d783641365ea0fe8b6e5e3bfbb9f577b7ea68e72d16a2a13dc01c7b46c19aecf06e64afe33f392" +
            "6c3dfb6c2981707c05d2d756d8c08fc18bd6ae283579f2a434acbd50993f946345e0e61ae173535b9dfb2077f88e2d8d" +
            "5287319c8abd3de57d519139cf37448aceafa6ab1a638e5705be430a210adab0e438f074e60caddbb57392191ed02b95" +
            "ff986edf54f61d4e793b07f600f3b6868646107cf5a5550534a6dad94757e6cd572763e0b54b05bf1d81b27dfd356a09" +
            "86ec996d65f1",
        "tombstone digest": "a2ecab46a4cf34f6a789742f2d36e2b7",
        "inbox/<id>.env": "5641554c54454e560101605a725d2a4adfeeb1a29e17edd621c1b7593ee8cdbc44ac6c4ab6e2f805d23cb27bebc629f8" +
            "f9926d4fd07a66d364617776e5006b458ac17dada2e141364e9a54e35757066c594d38bb187f82e26545974f7f65d8f0" +
            "388781657b7350445e7b9ac2ff8fd3220ca3825e98a2f3003f3ca263fe3928d23ffd5313ee7b8d89d88a2bc65d29a5ec" +
            "27a40409e4d4cc7f15",
        "items/<id>": "5641554c5449544d01010000707172737475767778797a7b7c7d7e7fc0c1c2c3c4c5c6c707dc3c2d5ac1b3716a9b36e2" +
            "f781f37fc746e8f85f4b4b2697513873a1547d92a3e3f48f",
    ]

    @Test func completeVault() throws {
        var got: [String: String] = [:]
        let kek = try KeyEncryptionKey.derive(password: Self.secret(Array(Self.password.utf8)), salt: Self.salt, parameters: Self.kdf)
        let master = try MasterKey(secret: Self.secret(Self.vmk))
        got["kek"] = Hex.encode(Self.bytes(kek.secret))
        got["header mac key"] = Hex.encode(Self.bytes(try master.headerMACKey(vaultID: Self.vaultID)))
        got["manifest key"] = Hex.encode(Self.bytes(try master.manifestKey(vaultID: Self.vaultID)))
        let pair = try master.vaultKeyPair(vaultID: Self.vaultID)
        got["x25519 private key"] = Hex.encode(Self.bytes(pair.secret))
        got["x25519 public key"] = Hex.encode(pair.publicKey.bytes)
        let header = try VaultHeader.sealV1(vaultID: Self.vaultID, kdf: Self.kdf, salt: Self.salt, kek: kek,
                                          masterKey: master, options: [], nonce: Self.wrapNonce)
        got["vault.header"] = Hex.encode(header.bytes)
        var manifest = try Manifest(entries: [Self.entry()])
        manifest.generation = 1
        let manifestKey = try master.manifestKey(vaultID: Self.vaultID)
        // The published vault's manifest is format version 2 (still read);
        // the version 3 vector below adds a second version of the item.
        got["manifest"] = Hex.encode(try manifest.sealed(key: manifestKey, vaultID: Self.vaultID, nonce: Self.manifestNonce,
                                                         formatVersion: 2))
        got["manifest v3"] = Hex.encode(try Self.versionedManifest().sealed(key: manifestKey, vaultID: Self.vaultID,
                                                                           nonce: Self.manifestNonce, formatVersion: 3))
        got["manifest v4"] = Hex.encode(try Self.droppedManifest().sealed(key: manifestKey, vaultID: Self.vaultID,
                                                                         nonce: Self.manifestNonce, formatVersion: 4))
        got["manifest v5"] = Hex.encode(try Self.historyManifest().sealed(key: manifestKey, vaultID: Self.vaultID,
                                                                         nonce: Self.manifestNonce, formatVersion: 5))
        got["manifest v6"] = Hex.encode(try Self.digestManifest().sealed(key: manifestKey, vaultID: Self.vaultID,
                                                                        nonce: Self.manifestNonce, formatVersion: 6))
        got["manifest v7"] = Hex.encode(try Self.forgottenManifest().sealed(key: manifestKey, vaultID: Self.vaultID,
                                                                           nonce: Self.manifestNonce))
        got["tombstone digest"] = Hex.encode(try Self.entry().tombstoneDigest)
        // The envelope, with the ephemeral key fixed (only a test may do that).
        var payload = [UInt8]()
        try Self.entry().encode(into: &payload)
        let (enc, sender) = try HPKE.setupSender(recipient: pair.publicKey, info: DropInEnvelope.info + Self.vaultID,
                                                 aead: .aes256GCM, mode: .base, psk: nil, pskID: [UInt8](),
                                                 ephemeralKey: X25519PrivateKey(secret: Self.secret(Self.ephemeral)))
        let prefix = DropInEnvelope.magic + [1, 1] + enc
        let envelope = prefix + (try sender.seal(payload, aad: prefix))
        got["inbox/<id>.env"] = Hex.encode(envelope)
        let item = MemoryBytes()
        let w = try ItemWriter(key: FileKey(secret: Self.secret(Self.fileKey)),
                               header: ItemHeader(flags: [], itemID: Self.itemID, noncePrefix: Self.noncePrefix), sink: item)
        try w.write(Array("hello, vault".utf8))
        try w.finish()
        got["items/<id>"] = Hex.encode(item.bytes)

        if ProcessInfo.processInfo.environment["VAULT_PRINT_VECTORS"] != nil {
            for (k, v) in got.sorted(by: { $0.key < $1.key }) { print("VECTOR \(k) = \(v)") }
        }
        for (k, v) in Self.expected { #expect(got[k] == v, "vector \(k)") }

        // And the files open: header with the password, manifest, envelope, item.
        let parsed = try VaultHeader(parsing: header.bytes)
        #expect(try parsed.unlock(kek: kek).secret == master.secret)
        let opened = try Manifest.open(Hex.decode(got["manifest"]!)!, key: manifestKey, vaultID: Self.vaultID)
        #expect(opened.entries.map(\.name) == ["hello.txt"])
        let v3 = try Manifest.open(Hex.decode(got["manifest v3"]!)!, key: manifestKey, vaultID: Self.vaultID)
        #expect(v3.versions(named: "hello.txt").map(\.version) == [1, 2] && v3.generation == 2)
        #expect(v3.entry(named: "hello.txt")?.itemID == Self.seq(0xd0, 16))
        #expect(v3.entries.allSatisfy { $0.droppedBy == nil })
        let v4 = try Manifest.open(Hex.decode(got["manifest v4"]!)!, key: manifestKey, vaultID: Self.vaultID)
        #expect(v4.versions(named: "hello.txt").map(\.droppedBy) == [Dropper(uid: 1001, name: "ncshare"), nil] && v4.generation == 3)
        #expect(!v4.historyKnown && v4.tombstones.count == 0)
        let v5 = try Manifest.open(Hex.decode(got["manifest v5"]!)!, key: manifestKey, vaultID: Self.vaultID)
        let wanted = try Self.historyManifest()
        #expect(v5.historyKnown && v5.history == wanted.history && v5.generation == 4)
        #expect(v5.tombstones.removedAt(Self.seq(0xe0, 16)) == 1_767_398_400)
        #expect(v5.pruneMarks[Self.seq(0xf0, 16)] == PruneMarks.Mark(since: 1_767_484_800, needed: 4096))
        #expect(v5.versions(named: "hello.txt").map(\.droppedBy) == [Dropper(uid: 1001, name: "ncshare"), nil])
        // A version 5 tombstone names an id alone: it removes any item under it.
        var other = try Self.entry()
        other.itemID = Self.seq(0xe0, 16)
        #expect(v5.tombstones.removes(other))
        let v6 = try Manifest.open(Hex.decode(got["manifest v6"]!)!, key: manifestKey, vaultID: Self.vaultID)
        #expect(v6.generation == 5 && v6.history == wanted.history && v6.entries.count == 2)
        #expect(v6.tombstones == (try Self.digestManifest()).tombstones && v6.tombstones.removes(other))
        other.fileKey = try FileKey(secret: Self.secret(Self.seq(0x81, 32)))
        #expect(!v6.tombstones.removes(other) && v5.tombstones.removes(other))
        #expect(v6.forgottenHosts.count == 0 && v5.forgottenHosts.count == 0)
        let v7 = try Manifest.open(Hex.decode(got["manifest v7"]!)!, key: manifestKey, vaultID: Self.vaultID)
        #expect(v7.generation == 6 && v7.tombstones == v6.tombstones && v7.pruneMarks == v6.pruneMarks && v7.entries.count == 2)
        #expect(v7.forgottenHosts.names == [Self.seq(0x0a, 16)] && v7.forgottenHosts.forgottenAt(Self.seq(0x0a, 16)) == 1_767_571_200)
        // Forgotten hosts cannot be written in the older formats.
        #expect(throws: VaultError.misuse(.manifestVersion(6))) {
            try Self.forgottenManifest().sealed(key: manifestKey, vaultID: Self.vaultID, formatVersion: 6)
        }
        // A dropper cannot be written in the older formats.
        #expect(throws: VaultError.misuse(.manifestVersion(3))) { try Self.droppedManifest().sealed(key: manifestKey, vaultID: Self.vaultID, formatVersion: 3) }
                let fromEnvelope = try DropInEnvelope.open(envelope, x25519: pair, xwing: master.xwingKeyPair(vaultID: Self.vaultID),
                                                           vaultID: Self.vaultID)
        #expect(fromEnvelope.name == "hello.txt" && fromEnvelope.itemID == Self.itemID)
    }

    /// "Test vector: manifest edge cases" (FORMAT.md, read from it): each
    /// file sealed again from its description, by hand where `Manifest`
    /// (which keeps every rule) cannot hold the record, then opened or
    /// refused as the section says: the version-1 minimum (44 bytes),
    /// version number 2^32 − 1, and backup storage's reserved names.
    @Test func manifestEdgeCases() throws {
        let published = try FormatVectors.published(section: "## Test vector: manifest edge cases")
        let master = try MasterKey(secret: Self.secret(Self.vmk))
        let key = try master.manifestKey(vaultID: Self.vaultID)
        let upper = "pack-000102030405060708090A0B0C0D0E0F", lower = "pack-000102030405060708090a0b0c0d0e0f"
        func be<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        func entry(_ kind: ItemKind, _ name: String, version: UInt32 = 1) throws -> ManifestEntry {
            var e = try Self.entry()
            (e.kind, e.name, e.version) = (kind, name, version)
            return e
        }
        func sealed(_ prefix: [UInt8], _ plaintext: [UInt8]) throws -> String {
            Hex.encode(prefix + (try AEAD(.aes256GCM, key: key).seal(nonce: Self.manifestNonce, aad: Self.vaultID + prefix,
                                                                        plaintext: plaintext)))
        }
        /// A version-5 file of one record, generation 5, empty trailer.
        func v5(_ e: ManifestEntry) throws -> String {
            var record = [UInt8]()
            e.encode(into: &record)
            return try sealed(Manifest.magic + [5, 0, 0, 0] + be(UInt64(5)) + Self.manifestNonce,
                              be(UInt32(1)) + be(e.version) + [0] + record + [UInt8](repeating: 0, count: 10))
        }
        let cases: [(name: String, file: String, opens: Bool)] = [
            ("manifest v1, empty", try sealed(Manifest.magic + [1, 0, 0, 0] + Self.manifestNonce, be(UInt32(0))), true),
            ("manifest, version 4294967295", try v5(entry(.file, "hello.txt", version: .max)), true),
            ("manifest, a file named pack- and upper-case hex", try v5(entry(.file, upper)), true),
            ("manifest, a file named pack- and lower-case hex", try v5(entry(.file, lower)), false),
            ("manifest, a pack named pack- and upper-case hex", try v5(entry(.pack, upper)), false),
        ]
        #expect(Set(published.keys) == Set(cases.map(\.name)), "FORMAT.md names \(published.keys.sorted())")
        for c in cases {
            #expect(published[c.name] == c.file, "vector \(c.name)")
            let file = try #require(Hex.decode(published[c.name] ?? ""))
            if c.opens {
                let m = try Manifest.open(file, key: key, vaultID: Self.vaultID)
                #expect(m.generation == (file[8] == 1 ? 0 : 5), "\(c.name)")
            } else {
                #expect(throws: VaultError.corruptedOrTampered, "\(c.name)") { try Manifest.open(file, key: key, vaultID: Self.vaultID) }
            }
        }
        // The shortest: a version-1 manifest of no records; one byte less is refused unread.
        let empty = try #require(Hex.decode(published["manifest v1, empty"] ?? ""))
        let opened = try Manifest.open(empty, key: key, vaultID: Self.vaultID)
        #expect(empty.count == 44 && opened.entries.isEmpty && opened.generation == 0)
        #expect(throws: VaultError.corruptedOrTampered) { try Manifest.open(Array(empty.dropLast()), key: key, vaultID: Self.vaultID) }
        // What the writer makes of the two accepted version-5 files, asked
        // for version 5 (it writes 6 otherwise): the same bytes.
        for (name, e) in [("manifest, version 4294967295", try entry(.file, "hello.txt", version: .max)),
                          ("manifest, a file named pack- and upper-case hex", try entry(.file, upper))] {
            var m = try Manifest(entries: [e])
            m.generation = 5
            #expect(Hex.encode(try m.sealed(key: key, vaultID: Self.vaultID, nonce: Self.manifestNonce, formatVersion: 5)) == published[name],
                    "\(name)")
        }
        // 2^32 − 1 is a valid number, and the last: the addition after 2^32 − 2 gets it; none comes after it.
        let top = try Manifest.open(try #require(Hex.decode(published["manifest, version 4294967295"] ?? "")), key: key,
                                    vaultID: Self.vaultID)
        #expect(top.entry(named: "hello.txt")?.version == UInt32.max && !top.canAddVersion(of: "hello.txt"))
        var full = top
        #expect(throws: VaultError.tooManyVersions(name: "hello.txt")) {
            try full.addVersion(try entry(.file, "hello.txt").withID(Self.seq(0xd0, 16)))
        }
        var below = try Manifest(entries: [try entry(.file, "hello.txt", version: .max - 1)])
        #expect(try below.addVersion(try entry(.file, "hello.txt").withID(Self.seq(0xd0, 16))).version == UInt32.max)
        // The writer refuses the reserved names the reader refuses.
        #expect(throws: VaultError.invalidName(lower)) { try Manifest(entries: [try entry(.file, lower)]) }
        #expect(throws: VaultError.invalidName(upper)) { try Manifest(entries: [try entry(.pack, upper)]) }
    }
}

extension ManifestEntry {
    /// The same entry under another item id (a second version of it in a test).
    func withID(_ id: [UInt8]) -> ManifestEntry {
        var e = self
        e.itemID = id
        return e
    }
}

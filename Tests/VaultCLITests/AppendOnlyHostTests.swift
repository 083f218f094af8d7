import Foundation
import Testing

/// Issue 41: a backup host that may only create objects in the remote's
/// inbox (and read the header and its record) backs up incrementally, and
/// an infected one destroys nothing. Against OpenSSH's sftp server with the
/// README's authorized_keys line (SFTPServer), through rclone's own sftp
/// backend; the owner has full rights over the same server.
@Suite(.serialized, .enabled(if: SFTPServer.unavailable == nil)) struct AppendOnlyHostTests {
    let server: SFTPServer
    let owner: VaultFixture
    let host: Sandbox
    let source: String
    var env: [String: String] { server.rcloneEnvironment() }

    init() throws {
        server = try SFTPServer()
        owner = try VaultFixture()
        host = try Sandbox()
        source = host.path + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: false)
        #expect(try owner.run(["remote", "add", "box", server.ownerTarget], env).status == 0)
        let pushed = try owner.run(["push"], env, timeout: 60)
        #expect(pushed.status == 0, "\(pushed.stderr)")
    }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: source + "/" + name))
    }

    /// `vault backup SOURCE --to host:... --json` on the host; its summary.
    func backup(_ extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let r = try CLIHarness.run(["backup", source, "--to", server.hostTarget, "--json"] + extra,
                                   environment: host.environment(env), cwd: host.path, timeout: 120)
        #expect(r.status == 0, "backup --to: \(r.stderr)", sourceLocation: sourceLocation)
        var summary = (try? JSONObject.parse(r.stdout)) ?? [:]
        summary["stderr"] = r.stderr
        return summary
    }

    func ownerRun(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> CLIHarness.Result {
        let r = try owner.run(args, env, timeout: 120)
        #expect(r.status == 0, "\(args.joined(separator: " ")): \(r.stderr)", sourceLocation: sourceLocation)
        return r
    }

    func fingerprint() throws -> String { try owner.info()["public_key_fingerprint"] as? String ?? "" }

    /// Unchanged runs upload under 1 % of the first, before and after the
    /// owner has published a record; once the owner pruned a pack, the
    /// host stores its data again instead of pointing at it (a snapshot
    /// that did would be refused), and the owner restores every byte.
    @Test func aCreateOnlyHostBacksUpIncrementallyAndNeverReusesWhatWasPruned() throws {
        let big = BackupFixture.random(3 << 20, seed: 41)
        try write("big", big)
        try write("notes", Array("notes\n".utf8))
        let first = try backup(["--fingerprint", try fingerprint()])
        let stored = first["bytes_stored"] as? Int ?? 0
        #expect(stored > 3 << 20, "\(first)")
        #expect((first["stderr"] as? String ?? "").contains("is append-only for this host"), "its first run says so: \(first)")
        // This host cannot list the inbox, or delete what it sent.
        #expect(try server.rclone(["lsf", server.hostTarget + "/inbox"]).status != 0)
        let second = try backup()
        #expect((second["bytes_stored"] as? Int ?? .max) < stored / 100, "no record yet: what it sent is reused: \(second)")

        // A single file goes the same way (`add --to`).
        let note = host.path + "/note.txt"
        try Data("a note\n".utf8).write(to: URL(fileURLWithPath: note))
        let added = try CLIHarness.run(["add", "--to", server.hostTarget, note], environment: host.environment(env), cwd: host.path, timeout: 60)
        #expect(added.status == 0, "add --to: \(added.stderr)")

        try ownerRun(["pull"])
        #expect(try owner.run(["get", "note.txt"]).stdoutText == "a note\n")
        let records = try FileManager.default.contentsOfDirectory(atPath: server.root + "/hosts")
        #expect(records.count == 1, "one record, for this host's key: \(records)")
        let third = try backup()
        #expect((third["bytes_stored"] as? Int ?? .max) < stored / 100, "with the record: \(third)")

        // The owner keeps only a snapshot without `big` and prunes at once:
        // the pack that held it is deleted, here and on the remote.
        try write("big", BackupFixture.random(1 << 20, seed: 42))
        _ = try backup()
        try ownerRun(["pull"])
        let pruned = try ownerRun(["snapshots", "forget", "--keep-last", "1", "--prune", "--grace", "0"])
        let pushed = try ownerRun(["push"])
        // The host gets `big` back as it was: its cache knows those pieces,
        // but the record says their pack is gone, so they go up again.
        try write("big", big)
        let fourth = try backup()
        #expect((fourth["bytes_stored"] as? Int ?? 0) > 3 << 20,
                "stored again, not referenced: \(fourth); the prune said: \(pruned.stderr); the push said: \(pushed.stderr)")
        try ownerRun(["pull"])
        let listed = try ownerRun(["snapshots", "list", "--json"])
        #expect(BackupFixture.snapshotCount(listed) == 2, "the new snapshot was taken in: \(listed.stdoutText)\(listed.stderr)")
        let out = owner.path + "/out"
        try ownerRun(["snapshots", "restore", "latest", "--to", out])
        #expect(FileManager.default.contents(atPath: out + "/src/big") == Data(big))
    }

    /// Issue 45: after the owner's prune repacked a pack a host used, the
    /// host's next backup stored again everything its cache knew of it.
    /// The owner now publishes the host's repack note beside its record;
    /// the host keeps naming what the repack kept, and the owner's absorb
    /// proves that before it takes the snapshot in.
    /// The host backs up a, b, c and d, then a and b; the owner forgets
    /// the first snapshot and prunes at once, which repacks its pack (a and
    /// b kept). Returns the four files' bytes and the paths of the host's
    /// record and repack note in `hosts/`.
    func repackedHost(seed: UInt64) throws -> (content: [[UInt8]], record: String, note: String) {
        let content = (0..<4).map { BackupFixture.random(200_000, seed: seed + UInt64($0)) }
        for (i, name) in ["a", "b", "c", "d"].enumerated() { try write(name, content[i]) }
        let first = try #require(try backup(["--fingerprint", try fingerprint()])["snapshot"] as? String)
        try ownerRun(["pull"])
        for name in ["c", "d"] { try FileManager.default.removeItem(atPath: source + "/" + name) }
        _ = try backup()
        try ownerRun(["pull"])
        let pruned = try ownerRun(["snapshots", "forget", first, "--prune", "--grace", "0"])
        #expect(pruned.stderr.contains("repacked 1 pack"), "\(pruned.stderr)")
        let hosts = try FileManager.default.contentsOfDirectory(atPath: server.root + "/hosts").filter { !$0.hasPrefix(".") }
            .map { server.root + "/hosts/" + $0 }
        #expect(hosts.count == 2, "the record and the repack note: \(hosts)")
        func starts(_ path: String, _ magic: String) -> Bool { FileManager.default.contents(atPath: path)?.prefix(8) == Data(magic.utf8) }
        return (content, try #require(hosts.first { starts($0, "VAULTHR1") }), try #require(hosts.first { starts($0, "VAULTRN1") }))
    }

    /// The owner's vault after a lie: every snapshot taken in, the newest
    /// restoring `files`, and every byte read back.
    func ownerIsWhole(_ files: [String: [UInt8]], _ lie: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let pulled = try ownerRun(["pull"], sourceLocation: sourceLocation)
        #expect(!pulled.stderr.contains("refused"), "\(lie): \(pulled.stderr)", sourceLocation: sourceLocation)
        let out = owner.path + "/out-\(UInt32.random(in: 0...UInt32.max))"
        try ownerRun(["snapshots", "restore", "latest", "--to", out], sourceLocation: sourceLocation)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out + "/src")) == Set(files.keys), "\(lie)", sourceLocation: sourceLocation)
        for (name, bytes) in files {
            #expect(FileManager.default.contents(atPath: out + "/src/" + name) == Data(bytes), "\(lie): \(name)", sourceLocation: sourceLocation)
        }
        try ownerRun(["check", "--read-data"], sourceLocation: sourceLocation)
    }

    @Test func aCreateOnlyHostKeepsNamingWhatARepackKept() throws {
        let (content, _, _) = try repackedHost(seed: 450)

        let e = BackupFixture.random(200_000, seed: 454)
        try write("e", e)
        let next = try backup()
        let stored = try #require(next["bytes_stored"] as? Int)
        #expect(stored < 260_000, "a and b are named where the repack kept them, only e goes up: \(next)")
        try ownerIsWhole(["a": content[0], "b": content[1], "e": e], "no lie")
    }

    /// A remote that lies about `hosts/`: it serves the note of an older
    /// generation beside the current record (as if the two were read either
    /// side of the owner's update), swaps the record and the note, or cuts
    /// the note short. The host uses no note it cannot tie to the record it
    /// accepted: it stores what it needs again (the first lie proves the
    /// note was not used), its backups still succeed, and the owner's vault
    /// stays whole: every snapshot taken in, restored and read back.
    @Test func aLyingRemoteCostsTheHostUploadsAndTheOwnerNothing() throws {
        let (content, record, note) = try repackedHost(seed: 460)
        let older = try #require(FileManager.default.contents(atPath: note))
        // A day's backup and the owner's pull: a newer record and note.
        try write("x", BackupFixture.random(1_000, seed: 470))
        _ = try backup()
        try ownerRun(["pull"])
        let newer = try #require(FileManager.default.contents(atPath: note))
        #expect(newer != older, "the owner wrote the note again at its new generation")
        var files = ["a": content[0], "b": content[1], "x": BackupFixture.random(1_000, seed: 470)]

        try older.write(to: URL(fileURLWithPath: note))
        try write("y", BackupFixture.random(1_000, seed: 471))
        files["y"] = BackupFixture.random(1_000, seed: 471)
        let stale = try backup()
        #expect((stale["bytes_stored"] as? Int ?? 0) > 400_000, "an older note is not used: a and b go up again: \(stale)")
        try ownerIsWhole(files, "an older note beside the record")

        for (lie, apply) in [("the record and the note swapped", { () throws -> Void in
                                 let (r, n) = (try Data(contentsOf: URL(fileURLWithPath: record)), try Data(contentsOf: URL(fileURLWithPath: note)))
                                 try n.write(to: URL(fileURLWithPath: record))
                                 try r.write(to: URL(fileURLWithPath: note))
                             }),
                             ("the note cut short", { () throws -> Void in
                                 try Data(try Data(contentsOf: URL(fileURLWithPath: note)).dropLast(1)).write(to: URL(fileURLWithPath: note))
                             })] {
            try apply()
            let name = "z-" + lie.split(separator: " ")[1]
            files[name] = BackupFixture.random(1_000, seed: UInt64(lie.count))
            try write(name, files[name]!)
            _ = try backup()
            try ownerIsWhole(files, lie)
        }
    }

    /// The owner forgets every snapshot of a host and prunes before the host
    /// ever read a record: the host's record is retired (HostRecord.retired),
    /// not deleted, so its next backup stores its data again instead of
    /// naming the pruned pack; the owner takes that snapshot in and restores
    /// it. Deleted, the record read as "none published yet", the host named
    /// the pack, and its snapshot was refused (the model test's seed
    /// 17593854877841883336).
    @Test func aHostWhoseSnapshotsWereAllForgottenStoresItsDataAgain() throws {
        let data = BackupFixture.random(1 << 20, seed: 43)
        try write("data", data)
        let first = try backup(["--fingerprint", try fingerprint()])
        let id = try #require(first["snapshot"] as? String)
        try ownerRun(["pull"])
        let records = try FileManager.default.contentsOfDirectory(atPath: server.root + "/hosts")
        #expect(records.count == 1, "\(records)")
        try ownerRun(["snapshots", "forget", id, "--prune", "--grace", "0"])
        try ownerRun(["push"])
        let record = try #require(records.first)
        #expect(FileManager.default.contents(atPath: server.root + "/hosts/" + record) == Data("VAULTHR0".utf8), "retired, not deleted")
        let second = try backup()
        #expect((second["bytes_stored"] as? Int ?? 0) > 1 << 20, "stored again: \(second)")
        #expect((second["stderr"] as? String ?? "").contains("no longer holds any snapshot of this host"), "\(second)")
        let pulled = try ownerRun(["pull"])
        #expect(!pulled.stderr.contains("refused"), "\(pulled.stderr)")
        let listed = try ownerRun(["snapshots", "list", "--json"])
        #expect(BackupFixture.snapshotCount(listed) == 1, "\(listed.stdoutText)\(listed.stderr)")
        let out = owner.path + "/out"
        try ownerRun(["snapshots", "restore", "latest", "--to", out])
        #expect(FileManager.default.contents(atPath: out + "/src/data") == Data(data))
        // The owner's record for the host is a sealed one again.
        #expect(FileManager.default.contents(atPath: server.root + "/hosts/" + record).map { $0.count > 8 } == true)
    }

    /// A host whose snapshot the owner took in from its own inbox (a pair
    /// copied there, not pulled) and forgot before any record of it was
    /// published: the prune that deletes its pack retires a record that
    /// never existed (hosts.forgotten), and the host stores its data again.
    /// Then the storage lies: once the owner has forgotten that snapshot
    /// too, it deletes the marker the prune left, so the host may read
    /// "none published yet" and name a pruned pack. The pulls after leave
    /// every blob the owner held as it was, the host's data is stored again
    /// at the latest on the backup after the owner's refusal, and every
    /// byte restores.
    @Test func aHostForgottenBeforeItsRecordWasPublishedStoresItsDataAgain() throws {
        let data = BackupFixture.random(1 << 20, seed: 44)
        try write("data", data)
        let first = try backup(["--fingerprint", try fingerprint()])
        let id = try #require(first["snapshot"] as? String)
        for name in try FileManager.default.contentsOfDirectory(atPath: server.root + "/inbox") where !name.hasPrefix(".") {
            try FileManager.default.copyItem(atPath: server.root + "/inbox/" + name, toPath: owner.dir + "/inbox/" + name)
        }
        try ownerRun(["list"])
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: server.root + "/hosts")) ?? []).isEmpty, "no record was published")
        try ownerRun(["snapshots", "forget", id, "--prune", "--grace", "0"])
        let records = (try? FileManager.default.contentsOfDirectory(atPath: server.root + "/hosts")) ?? []
        #expect(records.count == 1, "\(records)")
        let record = try #require(records.first)
        #expect(FileManager.default.contents(atPath: server.root + "/hosts/" + record) == Data("VAULTHR0".utf8), "retired")
        let second = try backup()
        #expect((second["bytes_stored"] as? Int ?? 0) > 1 << 20, "stored again: \(second)")
        #expect((second["stderr"] as? String ?? "").contains("no longer holds any snapshot of this host"), "\(second)")
        try ownerRun(["pull"])
        let secondID = try #require(second["snapshot"] as? String)

        // The owner forgets that one too; the storage deletes the marker.
        try ownerRun(["snapshots", "forget", secondID, "--prune", "--grace", "0"])
        try? FileManager.default.removeItem(atPath: server.root + "/hosts/" + record)
        try write("more", Array("more\n".utf8))
        var held: [String: Data] = [:]
        for round in 0..<2 {
            _ = try backup()
            held = try owner.filesInVault().filter { $0.hasPrefix("items/") }
                .reduce(into: held) { $0[$1] = $0[$1] ?? FileManager.default.contents(atPath: owner.dir + "/" + $1) }
            let pulled = try owner.run(["pull"], env, timeout: 120)
            #expect(pulled.status == 0, "pull \(round): \(pulled.stderr)")
            for (path, bytes) in held where FileManager.default.fileExists(atPath: owner.dir + "/" + path) {
                #expect(FileManager.default.contents(atPath: owner.dir + "/" + path) == bytes, "\(path) changed")
            }
        }
        let out = owner.path + "/out"
        try ownerRun(["snapshots", "restore", "latest", "--to", out])
        #expect(FileManager.default.contents(atPath: out + "/src/data") == Data(data))
        #expect(FileManager.default.contents(atPath: out + "/src/more") == Data("more\n".utf8))
        #expect(try owner.run(["check", "--read-data"]).status == 0)
    }

    /// The ransomware: with the host's credentials it tries to delete,
    /// overwrite, truncate, rename, change and list every object it can
    /// name, and to replace the owner's record. Every attempt fails, no
    /// object the owner or the host stored changes, the owner's pull takes
    /// in the backup that was waiting and names the junk it dropped, and
    /// every snapshot restores byte for byte.
    @Test func anInfectedHostDestroysNothing() throws {
        let data = BackupFixture.random(2 << 20, seed: 43)
        try write("data", data)
        _ = try backup(["--fingerprint", try fingerprint()])
        try ownerRun(["pull"])
        try ownerRun(["push"])
        try write("later", Array("sent, not yet pulled\n".utf8))
        _ = try backup()   // waits in the inbox
        let before = try server.files()
        #expect(before.keys.contains { $0.hasPrefix("items/") } && before.keys.contains { $0.hasPrefix("inbox/") }
                && before.keys.contains { $0.hasPrefix("hosts/") }, "\(before.keys.sorted())")

        let junk = host.path + "/junk"
        try Data("encrypted by ransomware".utf8).write(to: URL(fileURLWithPath: junk))
        let target = server.hostTarget
        var succeeded: [String] = []
        func attempt(_ args: [String], stdin: [UInt8] = []) throws {
            if try server.rclone(args, stdin: stdin).status == 0 { succeeded.append(args.joined(separator: " ")) }
        }
        // What it can name: every object the test knows of (more than it
        // could learn itself), and the whole copy.
        // Each object: deleted, overwritten, renamed; one of each kind
        // (header, manifest, record, a blob, a waiting drop-in) also
        // truncated and touched (the same requests on every object: fewer
        // ssh sessions).
        let kinds = ["vault.header", "manifest"] + ["hosts/", "items/", "inbox/"].compactMap { p in before.keys.sorted().first { $0.hasPrefix(p) } }
        for path in before.keys.sorted() {
            let object = target + "/" + path
            try attempt(["deletefile", object])
            try attempt(["copyto", "--sftp-set-modtime=false", junk, object])
            try attempt(["moveto", object, object + ".x"])
            if kinds.contains(path) {
                try attempt(["rcat", "--sftp-set-modtime=false", object], stdin: [])
                try attempt(["touch", "--no-create", object])
            }
        }
        for whole in [target, target + "/items", target + "/inbox", target + "/hosts"] {
            try attempt(["purge", whole])
            try attempt(["delete", whole])
            try attempt(["lsf", "-R", whole])
        }
        #expect(succeeded.isEmpty, "the host's rights allowed: \(succeeded)")
        let after = try server.files()
        for (path, sum) in before { #expect(after[path] == sum, "\(path) changed or went") }

        // What it may do, create, it does: junk under new names.
        #expect(try server.rclone(["copyto", "--sftp-set-modtime=false", junk, target + "/inbox/" + String(repeating: "ab", count: 16) + ".env"]).status == 0)
        #expect(try server.rclone(["copyto", "--sftp-set-modtime=false", junk, target + "/inbox/" + String(repeating: "ab", count: 16) + ".item"]).status == 0)
        let pulled = try ownerRun(["pull"])
        // Three: the junk, and the rights probe the host's first run could not delete.
        #expect(pulled.stderr.contains("3 files in the remote's inbox are no whole drop-in"), "the junk is named: \(pulled.stderr)")
        let listed = try ownerRun(["snapshots", "list", "--json"])
        #expect(BackupFixture.snapshotCount(listed) == 2, "\(listed.stdoutText)\(listed.stderr)")
        let out = owner.path + "/out"
        try ownerRun(["snapshots", "restore", "latest", "--to", out])
        #expect(FileManager.default.contents(atPath: out + "/src/data") == Data(data))
        #expect(FileManager.default.contents(atPath: out + "/src/later") == Data("sent, not yet pulled\n".utf8))

        // The owner's pull deletes the junk once it has seen it for a day
        // (here: its record of when, moved two days back), not before.
        let again = try ownerRun(["pull"])
        #expect(again.stderr.contains("3 files in the remote's inbox are no whole drop-in"), "\(again.stderr)")
        let strays = owner.dir + "/remote.box.strays"
        let record = try String(contentsOfFile: strays, encoding: .utf8)
        let now = Int(Date().timeIntervalSince1970)
        let older = record.split(separator: "\n").map { line -> String in
            let f = line.split(separator: "\t", maxSplits: 1)
            return f.count == 2 && Int(f[0]) != nil ? "\(now - 2 * 86_400)\t\(f[1])" : String(line)
        }.joined(separator: "\n") + "\n"
        try older.write(toFile: strays, atomically: true, encoding: .utf8)
        let tidied = try ownerRun(["pull"])
        #expect(tidied.stderr.contains("deleted 3 files from the remote's inbox"), "\(tidied.stderr)")
        #expect(try server.files().keys.filter { $0.hasPrefix("inbox/abab") || $0.hasPrefix("inbox/.probe-") }.isEmpty)
    }
}

/// The same on S3 (SeaweedFS): the host's identity has the least that
/// server can grant (SeaweedS3: write under inbox/, read of the header
/// and of hosts/). Backing up works and stays incremental. The ransomware,
/// sending raw S3 requests signed with the host's keys (curl), can touch
/// nothing outside inbox/; inside it, SeaweedFS's one "Write" right lets it
/// delete and overwrite what waits there (docs/SECURITY.md says so): the
/// backups already taken in stay whole.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
struct AppendOnlyS3Tests {
    @Test func aHostWithSeaweedFSsLeastRightsTouchesNothingOutsideTheInbox() throws {
        let s3 = try SeaweedS3.get()
        let owner = try VaultFixture()
        let path = "\(SeaweedS3.bucket)/\(SeaweedS3.appendOnlyPrefix)"
        let target = "\(SeaweedS3.remoteName):\(path)"
        func ownerRun(_ args: [String]) throws -> CLIHarness.Result {
            let r = try owner.remoteRun(s3, args)
            #expect(r.status == 0, "\(args.joined(separator: " ")): \(r.stderr)")
            return r
        }
        _ = try ownerRun(["remote", "add", "box", target])
        _ = try ownerRun(["push"])
        let host = try Sandbox()
        let source = host.path + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: false)
        let data = BackupFixture.random(2 << 20, seed: 44)
        try Data(data).write(to: URL(fileURLWithPath: source + "/data"))
        func backup(_ extra: [String] = []) throws -> [String: Any] {
            let r = try CLIHarness.run(["backup", source, "--to", "seahost:" + path, "--json"] + extra,
                                       environment: host.environment(s3.hostRcloneEnvironment()), cwd: host.path, timeout: 120)
            #expect(r.status == 0, "backup --to: \(r.stderr)")
            var summary = (try? JSONObject.parse(r.stdout)) ?? [:]
            summary["stderr"] = r.stderr
            return summary
        }
        let fingerprint = try owner.info()["public_key_fingerprint"] as? String ?? ""
        let first = try backup(["--fingerprint", fingerprint])
        let stored = first["bytes_stored"] as? Int ?? 0
        #expect(stored > 2 << 20, "\(first)")
        #expect((first["stderr"] as? String ?? "").contains("this host can delete or overwrite at"), "SeaweedFS's Write: \(first)")
        let second = try backup()
        #expect((second["bytes_stored"] as? Int ?? .max) < stored / 100, "\(second)")
        _ = try ownerRun(["pull"])
        _ = try ownerRun(["push"])
        let third = try backup()
        let objects = try s3.objects(target)
        #expect((third["bytes_stored"] as? Int ?? .max) < stored / 100, "with the record: \(third) \(objects)")

        // The ransomware, with the host's keys and every name there.
        let before = try s3.objects(target)
        #expect(before.keys.contains { $0.hasPrefix("items/") } && before.keys.contains { $0.hasPrefix("inbox/") }, "\(before)")
        let sums = try md5(s3, target)
        let junk = host.path + "/junk"
        try Data("encrypted by ransomware".utf8).write(to: URL(fileURLWithPath: junk))
        func request(_ method: String, _ object: String, body: String? = nil) throws -> String {
            let args = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:s3",
                        "--user", "H\(s3.accessKey):h\(s3.secretKey)", "-X", method]
                + (body.map { ["--data-binary", "@" + $0] } ?? []) + ["http://127.0.0.1:\(s3.port)/\(path)/\(object)"]
            return try CLIHarness.run(args, environment: [:], timeout: 30, executable: "/usr/bin/curl").stdoutText
        }
        var allowed: [String] = []
        for object in before.keys.sorted() {
            for (method, body) in [("DELETE", nil), ("PUT", junk)] where try request(method, object, body: body).hasPrefix("2") {
                allowed.append("\(method) \(object)")
            }
        }
        #expect(try request("GET", "?list-type=2") == "403", "no listing")
        #expect(allowed.allSatisfy { $0.contains(" inbox/") }, "outside the inbox: \(allowed)")
        #expect(!allowed.isEmpty, "SeaweedFS's Write covers delete and overwrite in the inbox (SECURITY.md); if this changed, say so there")
        let after = try md5(s3, target)
        for (object, sum) in sums where !object.hasPrefix("inbox/") { #expect(after[object] == sum, "\(object) changed or went") }

        // What was taken in before stays whole: the owner restores it.
        _ = try ownerRun(["pull"])
        let out = owner.path + "/out"
        _ = try ownerRun(["snapshots", "restore", "latest", "--to", out])
        #expect(FileManager.default.contents(atPath: out + "/src/data") == Data(data))
    }

    /// MD5 of every object under `target`, as the owner sees them.
    func md5(_ s3: SeaweedS3, _ target: String) throws -> [String: String] {
        let r = try s3.rclone(["md5sum", target])
        var out: [String: String] = [:]
        for line in r.stdoutText.split(separator: "\n") {
            let f = line.split(separator: " ", maxSplits: 1)
            if f.count == 2 { out[f[1].trimmingCharacters(in: .whitespaces)] = String(f[0]) }
        }
        return out
    }
}

/// A pack the owner never got (the storage lost it, or it was set aside as
/// damaged) must not be named by a host for ever: the owner's record tells
/// the host of the packs its refused snapshot lacks, and the next backup
/// stores them again and is taken in. A local remote: the rule is the
/// record's, whatever the storage.
@Suite struct LostPackTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone")))
    func aHostIsToldOfAPackTheOwnerNeverGot() throws {
        let f = try BackupFixture()
        let (remote, fingerprint, sender, source) = try f.remoteAndSender()
        let data = BackupFixture.random(2 << 20, seed: 45)
        try Data(data).write(to: URL(fileURLWithPath: source + "/data"))
        func send(_ extra: [String] = []) throws -> [String: Any] {
            let r = try CLIHarness.run(["backup", source, "--to", remote, "--json"] + extra, environment: sender.environment(),
                                       cwd: sender.path, timeout: 60)
            #expect(r.status == 0, "\(r.stderr)")
            return (try? JSONObject.parse(r.stdout)) ?? [:]
        }
        _ = try send(["--fingerprint", fingerprint])
        // The storage loses the big pack (the largest content in the inbox).
        let inbox = remote + "/inbox"
        let big = try FileManager.default.contentsOfDirectory(atPath: inbox).filter { $0.hasSuffix(".item") }
            .max { (try? FileManager.default.attributesOfItem(atPath: inbox + "/" + $0)[.size] as? Int ?? 0) ?? 0
                < (try? FileManager.default.attributesOfItem(atPath: inbox + "/" + $1)[.size] as? Int ?? 0) ?? 0 }!
        let stem = String(big.dropLast(5))
        for suffix in [".item", ".env"] { try FileManager.default.removeItem(atPath: inbox + "/" + stem + suffix) }
        // Not knowing, the host names it again; the owner refuses both snapshots.
        let second = try send()
        #expect((second["bytes_stored"] as? Int ?? .max) < 64 << 10, "\(second)")
        #expect(try f.v.run(["pull"]).status == 0)
        let none = try f.snapshots(["list", "--json"])
        #expect(BackupFixture.snapshotCount(none) == 0, "\(none.stdoutText)\(none.stderr)")
        // The record says that pack is gone: the next backup stores it again.
        let third = try send()
        #expect((third["bytes_stored"] as? Int ?? 0) > 2 << 20, "stored again: \(third)")
        #expect(try f.v.run(["pull"]).status == 0)
        let one = try f.snapshots(["list", "--json"])
        #expect(BackupFixture.snapshotCount(one) == 1, "\(one.stdoutText)\(one.stderr)")
        let out = f.v.path + "/out"
        #expect(try f.snapshots(["restore", "latest", "--to", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out + "/src/data") == Data(data))
    }
}

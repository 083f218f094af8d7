import Foundation
import Testing

/// `vault rekey`: a new master key (so a new public key fingerprint), every
/// item written again under new keys and names, the same password; asks
/// first (`--yes` for scripts); and the crash harness: a SIGKILL at any
/// moment leaves the old state or the new one, never a mix.
@Suite struct RekeyTests {
    /// Adds ~6 items, one of 3 MiB and a folder; returns name -> SHA-256 of
    /// `get NAME` (for the folder, of its pax stream).
    static func populate(_ v: VaultFixture) throws -> [String: String] {
        var paths: [String] = []
        for (i, size) in [3 << 20, 0, 1, 70_000, 1 << 20].enumerated() {
            paths.append(try v.write("item-\(i).bin", randomBytes(size)))
        }
        try FileManager.default.createDirectory(atPath: v.path + "/folder/sub", withIntermediateDirectories: true)
        try v.write("folder/a.txt", Array("a\n".utf8))
        try v.write("folder/sub/b.bin", randomBytes(100_000))
        paths.append(v.path + "/folder")
        let r = try v.add(["add"] + paths)
        #expect(r.status == 0, "\(r.stderr)")
        var hashes: [String: String] = [:]
        for item in try v.listed() {
            let got = try v.get(item.name)
            #expect(got.status == 0)
            hashes[item.name] = sha256(got.stdout)
        }
        #expect(hashes.count == 6)
        return hashes
    }

    static func blobs(_ v: VaultFixture) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: v.dir + "/items"))
    }

    static func fingerprint(_ v: VaultFixture) throws -> String {
        try #require(v.info()["public_key_fingerprint"] as? String)
    }

    /// Every item listed with the content it had.
    static func expectContent(_ v: VaultFixture, _ hashes: [String: String], _ context: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(Set(try v.listed().map(\.name)) == Set(hashes.keys), "\(context)", sourceLocation: sourceLocation)
        for (name, hash) in hashes {
            let got = try v.get(name)
            #expect(got.status == 0 && sha256(got.stdout) == hash, "\(context): content of '\(name)'",
                    sourceLocation: sourceLocation)
        }
    }

    @Test func rekeyKeepsEveryItemAndThePasswordAndChangesEveryKey() throws {
        let v = try VaultFixture()
        let hashes = try Self.populate(v)
        let oldFingerprint = try Self.fingerprint(v)
        let oldBlobs = try Self.blobs(v)
        let oldHeader = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))
        let oldInfo = try v.info()

        let r = try v.run(["rekey", "--yes"])
        #expect(r.status == 0, "\(r.stderr)")
        let newFingerprint = try Self.fingerprint(v)
        #expect(newFingerprint != oldFingerprint)
        #expect(r.stderr.contains("new public key fingerprint: \(newFingerprint)"), "\(r.stderr)")
        #expect(r.stderr.contains("recovery kits"), "\(r.stderr)")

        // The same password opens it; every item is there, unchanged.
        try Self.expectContent(v, hashes, "after rekey")
        // Every blob is new: no old name is left, one new name per item.
        let newBlobs = try Self.blobs(v)
        #expect(newBlobs.isDisjoint(with: oldBlobs))
        #expect(newBlobs.count == oldBlobs.count)
        #expect(!FileManager.default.fileExists(atPath: v.dir + "/rekey.pending"))
        // Same vault id and KDF settings, new salt and wrapped key.
        let newInfo = try v.info()
        #expect(newInfo["vault_id"] as? String == oldInfo["vault_id"] as? String)
        #expect((newInfo["kdf"] as? NSDictionary) == (oldInfo["kdf"] as? NSDictionary))
        let newHeader = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))
        #expect(newHeader[1277..<1357] != oldHeader[1277..<1357])  // the slot's salt, nonce and wrapped key
        #expect(newHeader[29..<1245] != oldHeader[29..<1245])      // a new X-Wing public key
        let check = try v.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(!check.stderr.contains("leftover"), "\(check.stderr)")
        // A wrong password is still refused.
        let wrong = try v.sandbox.file("wrong", "not the password\n")
        #expect(try v.run(["list"], password: wrong).status == 12)
    }

    @Test func withoutYesAndNoTerminalItExits2AndChangesNothing() throws {
        let v = try VaultFixture()
        try v.write("a", [1, 2, 3])
        #expect(try v.add(["add", "a"]).status == 0)
        _ = try v.listed()
        let before = try Self.snapshot(v)
        let r = try v.run(["rekey"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("vault: rekey needs confirmation"), "\(r.stderr)")
        #expect(try Self.snapshot(v) == before)
    }

    /// The answer on a terminal: "n" cancels, nothing changes.
    @Test func answeringNoOnTheTerminalCancels() throws {
        let v = try VaultFixture()
        let before = try Self.snapshot(v)
        let t = try PTYDriver.run(["--vault", v.dir, "--password-file", v.passwordFile, "rekey"],
                                  steps: [.expect("continue?"), .send("n\n")], environment: v.environment())
        #expect(t.failed_step == nil, "\(t.text)")
        #expect(t.exit != 0 && t.exit != nil, "\(t.text)")
        #expect(try Self.snapshot(v) == before)
    }

    /// Every file of the vault (except the lock) with its bytes.
    static func snapshot(_ v: VaultFixture) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for rel in try v.filesInVault() where rel != "lock" {
            out[rel] = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/" + rel))
        }
        return out
    }

    // MARK: crash harness

    /// Kills per run of the harness: `VAULT_CRASH_RUNS` as in CrashTests,
    /// else 30 (this suite keeps to its time budget).
    static let runs: Int = max(ProcessInfo.processInfo.environment["VAULT_CRASH_RUNS"].flatMap { Int($0) } ?? 30, 1)

    /// After a kill: opens with the password, `check --read-data` exits 0
    /// (leftovers are only warnings), every item is listed once with its
    /// content.
    static func verify(_ v: VaultFixture, _ hashes: [String: String], run: Int,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let items = try v.listed(sourceLocation: sourceLocation)
        #expect(items.map(\.name).sorted() == hashes.keys.sorted(), "run \(run): items listed", sourceLocation: sourceLocation)
        #expect(items.allSatisfy { $0.origin == "dropped-in" }, "run \(run): origin changed", sourceLocation: sourceLocation)
        let check = try v.run(["check", "--read-data"])
        #expect(check.status == 0, "run \(run): check --read-data: \(check.stderr)", sourceLocation: sourceLocation)
        for line in check.stderr.split(separator: "\n") {
            let allowed = line.hasPrefix("vault: no problems found") || line.hasPrefix("vault: warning: leftover")
                || line.hasPrefix("vault: warning: orphan")
                || line.hasPrefix("hint: ")
            #expect(allowed, "run \(run): check said \(line)", sourceLocation: sourceLocation)
        }
        // Files in one restore; the folder as its pax stream.
        let out = v.path + "/restored-\(run)"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: out) }
        let files = items.filter { $0.kind == "file" }.map(\.name)
        let r = try v.run(["restore"] + files + ["--to", out])
        #expect(r.status == 0, "run \(run): restore: \(r.stderr)", sourceLocation: sourceLocation)
        for name in files {
            #expect((try? sha256(file: out + "/" + name)) == hashes[name], "run \(run): content of '\(name)'",
                    sourceLocation: sourceLocation)
        }
        let folder = try v.get("folder")
        #expect(folder.status == 0 && sha256(folder.stdout) == hashes["folder"], "run \(run): content of 'folder'",
                sourceLocation: sourceLocation)
    }

    @Test func killedRekeyLeavesTheOldStateOrTheNewNeverAMix() throws {
        let v = try VaultFixture()
        let hashes = try Self.populate(v)
        func rekey(killAfter delay: Double) throws -> CLIHarness.Result {
            try runKilled(after: delay, ["--vault", v.dir, "--password-file", v.passwordFile, "rekey", "--yes"],
                          environment: v.environment())
        }
        var duration = 0.0, killed = 0, switched = 0
        var fingerprint = "", blobs: Set<String> = []
        for run in 0..<Self.runs {
            if run % 10 == 0 {
                duration = try CrashTests.calibrate { try rekey(killAfter: CrashTests.noKill) }
                fingerprint = try Self.fingerprint(v)
                blobs = try Self.blobs(v)
            }
            let r = try CrashTests.killedRun(within: &duration) { try rekey(killAfter: $0) }
            if r.status != 0 {
                #expect(r.status == 137, "run \(run): rekey exited \(r.status): \(r.stderr)")
                killed += 1
            }
            // What a reader sees right after the kill, before any writer ran.
            let seen = try Self.fingerprint(v)
            try Self.verify(v, hashes, run: run)
            #expect(try Self.fingerprint(v) == seen, "run \(run): the fingerprint changed when the vault was next opened")

            // Old or new, never a mix: once leftovers and orphans are gone, the blobs
            // are all the old ones (old key) or all new ones (new key).
            let repair = try v.run(["check", "--repair", "--purge"])
            #expect(repair.status == 0, "run \(run): check --repair: \(repair.stderr)")
            let now = try Self.blobs(v)
            #expect(now.count == hashes.count, "run \(run): \(now.count) blobs after repair")
            if seen == fingerprint {
                #expect(now == blobs, "run \(run): old public key but not all old blobs")
                #expect(r.status != 0, "run \(run): rekey reported success but the key is the old one")
            } else {
                #expect(now.isDisjoint(with: blobs), "run \(run): new public key but old blobs remain in use")
                switched += 1
            }
            #expect(!FileManager.default.fileExists(atPath: v.dir + "/rekey.pending"), "run \(run): rekey.pending left")
            fingerprint = seen
            blobs = now
        }
        #expect(killed > 0)
        // Kills land on both sides of the switch.
        #expect(Self.runs < 20 || (switched > 0 && switched < Self.runs), "switched in \(switched) of \(Self.runs) runs")
        try Self.expectContent(v, hashes, "at the end")
    }
}

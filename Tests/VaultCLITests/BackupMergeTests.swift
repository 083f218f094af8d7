import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Prune across machines (docs/FORMAT.md, "Merge", step 0): a prune on one
/// machine cannot see a snapshot another machine took in since, so the
/// merge keeps every pack such a snapshot lists, whether the prune deleted
/// it or rewrote it as a repack. Real binaries, a HOME each, one remote.
@Suite("Backup prune across machines", .serialized)
struct BackupMergeTests {
    typealias Machine = MultiMachineTests.Machine

    static func write(_ m: Machine, _ name: String, seed: UInt64) throws {
        try FileManager.default.createDirectory(atPath: m.v.path + "/src", withIntermediateDirectories: true)
        try Data(BackupFixture.random(300_000, seed: seed)).write(to: URL(fileURLWithPath: m.v.path + "/src/" + name))
    }

    /// `vault backup` without the password, then an unlock that takes it in; the snapshot id.
    static func backup(_ m: Machine, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try m.bare(["backup", m.v.path + "/src", "--json"])
        #expect(r.status == 0, "backup: \(r.stderr)", sourceLocation: sourceLocation)
        #expect(try m.run(["snapshots"]).status == 0, sourceLocation: sourceLocation)
        return (try? JSONObject.parse(r.stdout))?["snapshot"] as? String ?? "?"
    }

    static func expectRestores(_ m: Machine, _ snapshot: String, _ files: [String: UInt64],
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let out = m.v.path + "/out-\(UInt32.random(in: 0...UInt32.max))"
        let r = try m.run(["snapshots", "restore", snapshot, "--to", out])
        #expect(r.status == 0, "restore \(snapshot.prefix(8)): \(r.stderr)", sourceLocation: sourceLocation)
        let names = Set((try? FileManager.default.contentsOfDirectory(atPath: out + "/src")) ?? [])
        #expect(names == Set(files.keys), sourceLocation: sourceLocation)
        for (name, seed) in files {
            #expect(FileManager.default.contents(atPath: out + "/src/" + name) == Data(BackupFixture.random(300_000, seed: seed)),
                    "\(name)", sourceLocation: sourceLocation)
        }
        let check = try m.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)", sourceLocation: sourceLocation)
    }

    static func push(_ m: Machine, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try m.run(["push"])
        #expect(r.status == 0, "push: \(r.stderr)", sourceLocation: sourceLocation)
    }

    static func pull(_ m: Machine, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try m.run(["pull"])
        #expect(r.status == 0, "pull: \(r.stderr)", sourceLocation: sourceLocation)
    }

    /// The laptop prunes the desktop's backups and pushes; the desktop
    /// pulls, and its next backup keeps naming what the laptop's repack
    /// kept (issue 45: it stored all of it again). The pull wrote the
    /// desktop's repack note.
    @Test func aRepackMadeOnAnotherMachineIsToldToThisMachinesBackups() throws {
        let (m, _) = try MultiMachineTests.machines(2)
        let (laptop, desktop) = (m[0], m[1])
        for (name, seed) in [("a", 11), ("b", 12), ("c", 13), ("d", 14)] as [(String, UInt64)] { try Self.write(desktop, name, seed: seed) }
        let s1 = try Self.backup(desktop)
        for name in ["c", "d"] { unlink(desktop.v.path + "/src/" + name) }
        _ = try Self.backup(desktop)
        try Self.push(desktop)
        try Self.pull(laptop)
        let pruned = try laptop.run(["snapshots", "forget", s1, "--prune", "--grace", "0"])
        #expect(pruned.status == 0 && pruned.stderr.contains("repacked 1 pack"), "\(pruned.stderr)")
        try Self.push(laptop)
        try Self.pull(desktop)
        let notes = (try? FileManager.default.contentsOfDirectory(atPath: desktop.v.dir + "/notes")) ?? []
        #expect(notes.count == 1, "the pull wrote the desktop's note: \(notes)")

        try Self.write(desktop, "e", seed: 15)
        let r = try desktop.bare(["backup", desktop.v.path + "/src", "--json"])
        #expect(r.status == 0, "backup: \(r.stderr)")
        let summary = (try? JSONObject.parse(r.stdout)) ?? [:]
        #expect((summary["bytes_new"] as? Int ?? .max) < 330_000, "only e is new: \(summary)")
        let taken = try desktop.run(["snapshots"])
        #expect(taken.status == 0 && !taken.stderr.contains("refused") && !taken.stderr.contains("repacked"), "\(taken.stderr)")
        try Self.expectRestores(desktop, "latest", ["a": 11, "b": 12, "e": 15])
        try Self.push(desktop)
        try Self.pull(laptop)
        try Self.expectRestores(laptop, "latest", ["a": 11, "b": 12, "e": 15])
    }

    /// The desktop backs itself up; the laptop forgets an old snapshot and
    /// prunes while the desktop's newest, which still needs the old pack,
    /// has not reached it. After both push and pull, every snapshot left
    /// restores on both machines.
    @Test func aPruneDoesNotTakeFromASnapshotItCouldNotSee() throws {
        let (m, _) = try MultiMachineTests.machines(2)
        let (laptop, desktop) = (m[0], m[1])
        for (name, seed) in [("x", 1), ("z", 2), ("w", 3), ("u", 4)] as [(String, UInt64)] { try Self.write(desktop, name, seed: seed) }
        let s1 = try Self.backup(desktop)                       // x z w u, in one pack P
        for name in ["z", "w", "u"] { unlink(desktop.v.path + "/src/" + name) }
        let s2 = try Self.backup(desktop)                       // x, from P
        try Self.push(desktop)
        try Self.pull(laptop)

        try Self.write(desktop, "z", seed: 2)
        unlink(desktop.v.path + "/src/x")
        let s3 = try Self.backup(desktop)                       // z, from P: the laptop does not know it yet

        // The laptop sees s1 and s2: x is all of P that is needed, so P is rewritten with x alone.
        let pruned = try laptop.run(["snapshots", "forget", s1, "--prune", "--grace", "0"])
        #expect(pruned.status == 0 && pruned.stderr.contains("repacked 1 pack"), "\(pruned.stderr)")
        try Self.push(laptop)

        // The desktop's push merges: s3 is new there, so P stays beside the repack.
        try Self.push(desktop)
        try Self.pull(laptop)
        for machine in [laptop, desktop] {
            try Self.expectRestores(machine, s2, ["x": 1])
            try Self.expectRestores(machine, s3, ["z": 2])
        }

        // Now the desktop's prune sees every snapshot: the repack goes (the
        // pack shadows it) and P is rewritten with x and z.
        let again = try desktop.run(["snapshots", "prune", "--grace", "0"])
        #expect(again.status == 0 && again.stderr.contains("repacked 1 pack"), "\(again.stderr)")
        try Self.push(desktop)
        try Self.pull(laptop)
        for machine in [laptop, desktop] {
            try Self.expectRestores(machine, s2, ["x": 1])
            try Self.expectRestores(machine, s3, ["z": 2])
        }
    }

    /// The same for a pack deleted whole: the laptop forgets the only
    /// snapshot it knows that needs P, while the desktop made another.
    @Test func aDeletedPackComesBackForTheSnapshotThatNeedsIt() throws {
        let (m, _) = try MultiMachineTests.machines(2)
        let (laptop, desktop) = (m[0], m[1])
        try Self.write(desktop, "x", seed: 5)
        let s1 = try Self.backup(desktop)                       // x, in P
        try Self.push(desktop)
        try Self.pull(laptop)
        try Self.write(desktop, "y", seed: 6)
        let s2 = try Self.backup(desktop)                       // x from P, y in a new pack

        // P and s1's pack of trees: the laptop knows no other snapshot.
        let pruned = try laptop.run(["snapshots", "forget", s1, "--prune", "--grace", "0"])
        #expect(pruned.status == 0 && pruned.stderr.contains("deleted 2 unused packs"), "\(pruned.stderr)")
        try Self.push(laptop)
        try Self.push(desktop)
        try Self.pull(laptop)
        for machine in [laptop, desktop] { try Self.expectRestores(machine, s2, ["x": 5, "y": 6]) }
    }

    /// A `backup --to` host's snapshot taken in on the laptop from its own
    /// inbox (so no record is published) and forgotten there; the desktop,
    /// which never saw it, pulls and prunes the host's pack. The desktop's
    /// prune retires the host's record name on the remote (manifest version
    /// 7 carries the forgotten hosts), so the host stores its data again
    /// instead of naming the deleted pack, and every byte restores. Before,
    /// only the laptop knew the name: the desktop published nothing, the
    /// host read "none published yet", and its next snapshot was refused.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone")))
    func aHostForgottenOnAnotherMachineIsRetiredByThisMachinesPrune() throws {
        let (m, remote) = try MultiMachineTests.machines(2)
        let (laptop, desktop) = (m[0], m[1])
        let host = try Sandbox(), source = m[0].v.path + "/host-src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: false)
        let data = BackupFixture.random(1 << 20, seed: 71)
        try Data(data).write(to: URL(fileURLWithPath: source + "/big"))
        let fingerprint = try laptop.v.info()["public_key_fingerprint"] as? String ?? ""
        func send() throws -> [String: Any] {
            let r = try CLIHarness.run(["backup", source, "--to", remote, "--fingerprint", fingerprint, "--json"],
                                       environment: host.environment(), cwd: host.path, timeout: 60)
            #expect(r.status == 0, "\(r.stderr)")
            var out = (try? JSONObject.parse(r.stdout)) ?? [:]
            out["stderr"] = r.stderr
            return out
        }
        let first = try #require(try send()["snapshot"] as? String)
        for name in try FileManager.default.contentsOfDirectory(atPath: remote + "/inbox") where !name.hasPrefix(".") {
            try FileManager.default.moveItem(atPath: remote + "/inbox/" + name, toPath: laptop.v.dir + "/inbox/" + name)
        }
        #expect(try laptop.run(["list"]).status == 0)
        #expect(try laptop.run(["snapshots", "forget", first]).status == 0)
        try Self.push(laptop)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: remote + "/hosts")) ?? []).isEmpty, "no record was published")

        try Self.pull(desktop)
        let pruned = try desktop.run(["snapshots", "prune", "--grace", "0"])
        #expect(pruned.status == 0 && pruned.stderr.contains("deleted 2 unused packs"), "its data and its trees: \(pruned.stderr)")
        let records = (try? FileManager.default.contentsOfDirectory(atPath: remote + "/hosts")) ?? []
        #expect(records.count == 1, "\(records)")
        if let record = records.first {
            #expect(FileManager.default.contents(atPath: remote + "/hosts/" + record) == Data("VAULTHR0".utf8), "retired")
        }
        let second = try send()
        #expect((second["bytes_stored"] as? Int ?? 0) > 1 << 20, "stored again: \(second)")
        #expect((second["stderr"] as? String ?? "").contains("no longer holds any snapshot of this host"), "\(second)")
        try Self.pull(desktop)
        let out = desktop.v.path + "/out"
        let restored = try desktop.run(["snapshots", "restore", "latest", "--to", out])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(FileManager.default.contents(atPath: out + "/host-src/big") == Data(data))
        let check = try desktop.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")
    }

    /// A backup sent to a remote's inbox (`backup --to`) that needs a pack
    /// the owner's prune would delete: prune brings the remote's drop-ins in
    /// first. A remote it cannot reach is named, and the prune goes on with
    /// only what was past its grace when that inbox was last seen (issue
    /// 43, item 4): never seen, nothing goes, and it exits 3. A dry run
    /// says which inboxes it did not look at.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone")))
    func pruneLooksInTheRemotesInboxesFirst() throws {
        let f = try BackupFixture()
        let (remote, fingerprint, sender, source) = try f.remoteAndSender()
        try Data(BackupFixture.random(1 << 20, seed: 70)).write(to: URL(fileURLWithPath: source + "/big"))
        func send() throws -> String {
            let r = try CLIHarness.run(["backup", source, "--to", remote, "--fingerprint", fingerprint, "--json"],
                                       environment: sender.environment(), cwd: sender.path, timeout: 60)
            #expect(r.status == 0, "\(r.stderr)")
            return (try? JSONObject.parse(r.stdout))?["snapshot"] as? String ?? "?"
        }
        let s1 = try send()
        #expect(try f.v.run(["pull"]).status == 0)
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: source + "/notes"))
        let s2 = try send()                                     // big from s1's pack: waits on the remote

        #expect(try f.v.run(["remote", "add", "gone", "no-such-rclone-remote:vault"]).status == 0)
        let before = try f.v.filesInVault()
        func packs() throws -> Int? { try JSONObject.parse(try f.snapshots(["stats", "--json"]).stdout)["packs"] as? Int }
        let packsBefore = try #require(try packs())
        let dry = try f.snapshots(["prune", "--dry-run"])
        #expect(dry.status == 0 && dry.stderr.contains("a dry run did not look at the inboxes of 'usb', 'gone'"), "\(dry.stderr)")
        let held = try f.snapshots(["forget", s1, "--prune", "--grace", "0"])
        #expect(held.status == 3 && held.stderr.contains("inbox of remote 'gone'") && held.stderr.contains("that inbox was never seen")
                && held.stderr.contains("kept for a remote whose inbox could not be seen") && held.stderr.contains("deleted 0 unused packs"),
                "\(held.stderr)")
        // s1 was forgotten and s2 came in from 'usb' with its two packs; no pack went.
        #expect(try packs() == packsBefore + 2)
        #expect(try f.v.run(["remote", "remove", "gone"]).status == 0)

        let pruned = try f.snapshots(["prune", "--grace", "0"])
        #expect(pruned.status == 0 && pruned.stderr.contains("deleted 1 unused pack") && !pruned.stderr.contains("repacked"), "\(pruned.stderr)")
        #expect(try f.v.filesInVault().filter { $0.hasPrefix("items/") }.count == before.filter { $0.hasPrefix("items/") }.count + 1,
                "s1 went with its pack of trees, its data pack stayed, and s2 and its own two packs came in")
        let out = f.v.path + "/out"
        #expect(try f.snapshots(["restore", s2, "--to", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out + "/src/big") == Data(BackupFixture.random(1 << 20, seed: 70)))
        #expect(try f.v.run(["check", "--read-data"]).status == 0)
    }
}

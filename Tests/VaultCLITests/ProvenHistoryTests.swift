import Foundation
import Testing
import VaultBackup
@testable import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// Issue 37: other machines, droppers, `--to` hosts and the storage change
/// the same vault; nothing they do may lose an item or bring back what the
/// owner removed. Each test is one of the repros, run on the built
/// binary; each failed on 4f9261d (named in its comment).
@Suite("Issue 37: proven history", .serialized)
struct ProvenHistoryTests {
    typealias Machine = MultiMachineTests.Machine

    static func copyInbox(_ dir: String, to aside: String) throws -> [String] {
        try? FileManager.default.removeItem(atPath: aside)
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { !$0.hasPrefix(".") }
        for n in names { try FileManager.default.copyItem(atPath: dir + "/" + n, toPath: aside + "/" + n) }
        return names
    }

    static func putBack(_ names: [String], from aside: String, into dir: String) throws {
        for n in names {
            try? FileManager.default.removeItem(atPath: dir + "/" + n)
            try FileManager.default.copyItem(atPath: aside + "/" + n, toPath: dir + "/" + n)
        }
    }

    // MARK: 1 and 2: sync decided by history, not by generation numbers

    /// Item 1 (on 4f9261d: A's pull said "'rc' is older than this vault
    /// (generation 1 < 2)", its push deleted tax.pdf everywhere). A pushed
    /// at generation 0, B cloned, added and pushed (generation 1), A added
    /// twice (generation 2): neither contains the other, so A merges.
    @Test func aForkWithTheSmallerGenerationIsMergedNotOverwritten() throws {
        let a = Machine(v: try VaultFixture(), env: [:])
        let remote = a.v.path + "/remote"
        #expect(try a.run(["remote", "add", "rc", remote]).status == 0)
        #expect(try a.run(["push"]).status == 0)
        let b = Machine(v: try VaultFixture(password: a.v.password, create: false), env: [:])
        #expect(try b.run(["clone", remote, b.v.dir]).status == 0)
        #expect(try b.addFile("tax.pdf", "tax").status == 0)
        #expect(try b.items().map(\.name) == ["tax.pdf"])
        #expect(try b.run(["push"]).status == 0)
        for name in ["one.txt", "two.txt"] {
            #expect(try a.addFile(name, name).status == 0)
            _ = try a.items()
        }
        let pull = try a.run(["pull"])
        #expect(pull.status == 0 && pull.stderr.hasPrefix("vault: merged 'rc'"), "\(pull.stderr)")
        let push = try a.run(["push"])
        #expect(push.status == 0 && !push.stderr.contains("deleted"), "\(push.stderr)")
        #expect(try b.run(["pull"]).status == 0)
        let all = ["one.txt", "tax.pdf", "two.txt"]
        #expect(try a.items().map(\.name) == all && b.items().map(\.name) == all)
        for x in [a, b] { #expect(try x.run(["get", "tax.pdf"]).stdoutText == "tax") }
    }

    /// Item 2 (on 4f9261d: the re-added remote was "adopted" and B's item
    /// deleted everywhere): a remote added again has no base, so the next
    /// sync merges with none, a union less what tombstones say.
    @Test func aRemoteAddedAgainIsMergedNotAdopted() throws {
        let (m, remote) = try MultiMachineTests.machines(2)
        let (a, b) = (m[0], m[1])
        try b.addAndPush("tax.pdf", "tax")
        #expect(try a.addFile("one.txt", "one").status == 0)
        _ = try a.items()
        // Removed on A before it forgets the remote: it must stay removed.
        #expect(try a.run(["remove", "--yes", "seed"]).status == 0)
        #expect(try a.run(["remote", "remove", "origin"]).status == 0)
        #expect(try a.run(["remote", "add", "origin", remote]).status == 0)
        let push = try a.run(["push"])
        #expect(push.status == 0 && push.stderr.contains("merged 'origin'"), "\(push.stderr)")
        #expect(try b.run(["pull"]).status == 0)
        #expect(try a.items().map(\.name) == ["one.txt", "tax.pdf"])
        #expect(try b.items() == a.items())
    }

    // MARK: 3: ids are never reused

    /// Item 3 (on 4f9261d: the junk pack was taken in, restores failed with
    /// exit 14, and the next prune deleted the repack for good).
    @Test func aJunkPackUnderARepackedIDIsSetAsideAndTheRepackStays() throws {
        let f = try BackupFixture()
        for (i, name) in ["a", "b", "c", "d"].enumerated() { try f.write(name, BackupRepackTests.content(UInt64(60 + i))) }
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        _ = try f.snapshots([])
        let packName = try #require(try BackupRepackTests.items(f).keys.first { $0 != s1 })
        for name in ["c", "d"] { unlink(f.source + "/" + name) }
        let s2 = try #require(try f.backup()["snapshot"] as? String)
        let pruned = try f.snapshots(["forget", s1, "--prune", "--grace", "0"])
        #expect(pruned.stderr.contains("repacked 1 pack"), "\(pruned.stderr)")

        // Anyone with the public key: a pack under the rewritten pack's id.
        var junk = HostileDropIn()
        junk.itemID = try #require(Hex.decode(packName))
        junk.kind = 2
        junk.name = Array(BackupItems.packName(junk.itemID).utf8)
        junk.size = 100
        try junk.drop(into: f.v.dir, item: try junk.item([UInt8](repeating: 0, count: 100)))
        let listed = try f.snapshots([])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stderr.contains("drop-in 'pack-\(packName)' was refused: its id is that of an item this vault removed"),
                "\(listed.stderr)")
        #expect(FileManager.default.fileExists(atPath: f.v.dir + "/quarantine/\(packName).env"))
        let expected = ["a": BackupRepackTests.content(60), "b": BackupRepackTests.content(61)]
        try BackupRepackTests.restores(f, s2, expected)
        #expect(try f.snapshots(["prune", "--grace", "0"]).status == 0)
        try BackupRepackTests.restores(f, s2, expected)
        #expect(try f.v.run(["check", "--read-data"]).status == 0)
    }

    /// A pack id claimed by two items across machines (the model test lost
    /// a snapshot so, seed 9415527195587980778): machine B backs up; the
    /// storage puts junk under B's pack id into the remote's inbox, as large
    /// as B's pack; machine A takes the junk in and pushes it. B's merge
    /// reads the pieces its snapshot needs from both packs, keeps its own
    /// (and says so), and puts its blob over the junk on the remote
    /// although their sizes agree; A's next pull brings the real pack, and
    /// the snapshot restores on both machines and from the remote.
    @Test func aJunkPackUnderARealPacksIDLosesToTheOneTheSnapshotsRead() throws {
        let a = try BackupFixture()
        let remote = a.v.path + "/remote"
        #expect(try a.v.run(["remote", "add", "origin", remote]).status == 0)
        #expect(try a.v.run(["push"]).status == 0)
        let b = try VaultFixture(password: a.v.password, create: false)
        #expect(try b.run(["clone", remote, b.dir]).status == 0)
        let files = ["one": BackupRepackTests.content(70), "two": BackupRepackTests.content(71)]
        for (name, bytes) in files { try a.write(name, bytes) }
        let r = try b.add(["backup", a.source, "--json"], a.cacheEnv)
        let snapshot = try #require((try? JSONObject.parse(r.stdout))?["snapshot"] as? String, "\(r.stderr)")
        #expect(try b.run(["list"]).status == 0)
        // The backup's packs (its file pieces, its trees): the larger, the files'.
        let sizes = try FileManager.default.contentsOfDirectory(atPath: b.dir + "/items").filter { $0 != snapshot }.map {
            ($0, try FileManager.default.attributesOfItem(atPath: b.dir + "/items/" + $0)[.size] as? Int ?? 0)
        }
        let (pack, realSize) = try #require(sizes.max { $0.1 < $1.1 })

        // The storage: junk under that id, sealed to the vault's public key, the same size on disk.
        var junk = HostileDropIn()
        junk.itemID = try #require(Hex.decode(pack))
        junk.kind = 2
        junk.name = Array(BackupItems.packName(junk.itemID).utf8)
        var sealed: [UInt8] = []
        for n in stride(from: realSize, to: max(0, realSize - 4096), by: -1) {
            junk.size = UInt64(n)
            sealed = try junk.item([UInt8](repeating: 0, count: n))
            if sealed.count <= realSize { break }
        }
        #expect(sealed.count == realSize, "the junk is as large as the real pack")
        try FileManager.default.createDirectory(atPath: remote + "/inbox", withIntermediateDirectories: true)
        try junk.drop(into: remote, item: sealed)
        #expect(try a.v.run(["pull"]).status == 0)
        #expect(try a.v.run(["push"]).status == 0)

        let merged = try b.run(["push"])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(merged.stderr.contains("conflict: 'pack-\(pack)' has an item id that the other side holds or let go for another item"), "\(merged.stderr)")
        #expect(merged.stderr.contains("kept this vault's"), "\(merged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: b.dir + "/remote.origin.claimed"), "forgotten once the manifest landed")
        #expect(try a.v.run(["pull"]).status == 0)
        for (v, name) in [(a.v, "a"), (b, "b")] {
            let out = v.path + "/restored-\(name)"
            let restored = try v.run(["snapshots", "restore", snapshot, "--to", out])
            #expect(restored.status == 0, "\(name): \(restored.stderr)")
            for (file, bytes) in files {
                #expect(FileManager.default.contents(atPath: out + "/src/" + file) == Data(bytes), "\(name): \(file)")
            }
            let check = try v.run(["check", "--read-data"])
            #expect(check.status == 0, "\(name): \(check.stderr)")
        }
        let remoteCheck = try b.run(["check", "--remote", "origin", "--read-data"])
        #expect(remoteCheck.status == 0, "\(remoteCheck.stderr)")
    }

    /// Item 5, on one machine (on 4f9261d: the removed AWS_SECRET came back,
    /// and so did a forgotten snapshot with its key): copies of drop-ins put
    /// back into the inbox after `remove` and after `forget --prune` are set
    /// aside by name, never taken in.
    @Test func replayedDropInsOfWhatWasRemovedStaySetAside() throws {
        let f = try BackupFixture()
        let inbox = f.v.dir + "/inbox", aside = f.v.path + "/aside"
        #expect(try f.v.add(["add", "-", "--name", "creds.env"], stdin: Array("AWS_SECRET=hunter2\n".utf8)).status == 0)
        let secret = try Self.copyInbox(inbox, to: aside)
        #expect(try f.v.listed().map(\.name) == ["creds.env"])
        #expect(try f.v.run(["remove", "--yes", "creds.env"]).status == 0)
        try Self.putBack(secret, from: aside, into: inbox)
        let again = try f.v.run(["list"])
        #expect(again.stderr.contains("drop-in 'creds.env' was refused: its id is that of an item this vault removed"), "\(again.stderr)")
        #expect(try f.v.listed().isEmpty)

        try f.write("notes", Array("first\n".utf8))
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        let backup = try Self.copyInbox(inbox, to: aside + "2")
        _ = try f.snapshots([])
        try f.write("notes", Array("second\n".utf8))
        _ = try f.backup()
        #expect(try f.snapshots(["forget", s1, "--prune", "--grace", "0"]).status == 0)
        try Self.putBack(backup, from: aside + "2", into: inbox)
        let listed = try f.snapshots(["list", "--json"])
        #expect(BackupFixture.snapshotCount(listed) == 1, "\(listed.stdoutText)\(listed.stderr)")
        #expect(!listed.stdoutText.contains(s1), "the forgotten snapshot stays forgotten")
        #expect(listed.stderr.contains("drop-in 'snapshot-\(s1)' was refused"), "\(listed.stderr)")
    }

    /// Item 5 through a remote (on 4f9261d: once a pull of another
    /// machine's manifest shortened `remote.NAME.inbox`, the replayed copy
    /// was taken in, and a clone that never saw it took it too). The
    /// tombstone travels with every manifest, so no machine takes it.
    @Test func aDropInReplayedIntoTheRemotesInboxComesBackNowhere() throws {
        let (m, remote) = try MultiMachineTests.machines(2)
        let (a, b) = (m[0], m[1])
        #expect(try a.addFile("creds.env", "AWS_SECRET=hunter2").status == 0)
        #expect(try a.bare(["push"]).status == 0)   // to the remote's inbox
        let aside = a.v.path + "/aside"
        let copies = try Self.copyInbox(remote + "/inbox", to: aside)
        #expect(copies.count == 2)
        #expect(try b.run(["pull"]).status == 0)      // B takes it in from there
        #expect(try b.items().map(\.name).contains("creds.env"))
        #expect(try b.run(["remove", "--yes", "creds.env"]).status == 0)
        #expect(try b.run(["push"]).status == 0)
        #expect(try a.run(["pull"]).status == 0)
        #expect(try a.run(["push"]).status == 0)      // clears the remote's inbox
        #expect(try FileManager.default.contentsOfDirectory(atPath: remote + "/inbox").isEmpty)

        try Self.putBack(copies, from: aside, into: remote + "/inbox")
        for x in [a, b] {
            #expect(try x.run(["pull"]).status == 0)
            #expect(try !x.items().map(\.name).contains("creds.env"))
        }
        let c = Machine(v: try VaultFixture(password: a.v.password, create: false), env: [:])
        #expect(try c.run(["clone", remote, c.v.dir]).status == 0)
        #expect(try c.run(["pull"]).status == 0)
        #expect(try !c.items().map(\.name).contains("creds.env"))
        #expect(try c.run(["push"]).status == 0)
        #expect(try a.run(["pull"]).status == 0)
        #expect(try !a.items().map(\.name).contains("creds.env"))
    }

    /// Only backup storage carries "pack-…", "snapshot-…" and "repack-…":
    /// `add` refuses such a name, and a dropper's file under one is set aside.
    @Test func backupStorageNamesAreReserved() throws {
        let v = try VaultFixture()
        let name = "snapshot-" + String(repeating: "ab", count: 16)
        let r = try v.add(["add", "-", "--name", name], stdin: Array("x".utf8))
        #expect(r.status == 1 && r.stderr.contains("it is the name of a backup's storage"), "\(r.stderr)")
        var file = HostileDropIn()
        file.name = Array(name.utf8)
        file.size = 1
        try file.drop(into: v.dir, item: try file.item([0x78]))
        let listed = try v.run(["list"])
        #expect(listed.stderr.contains("drop-in '\(name)' was refused: only a backup's storage may carry that name"), "\(listed.stderr)")
        #expect(try v.listed().isEmpty)
    }

    /// One id claimed by two items on two machines (found by
    /// PartiesModelTests, seed 17394764103778292969): a junk pack under the
    /// id of a file one machine has not pushed yet, dropped into the
    /// remote's inbox and taken in by the other machine. Before the fix the
    /// file was lost on both (the junk blob replaced it); now the remote's
    /// claim keeps the id everywhere and the other item is kept apart: the
    /// file under a fresh id, the junk pack in quarantine/.
    @Test func anIDClaimedByTwoItemsLosesNeither() throws {
        for pushFirst in [0, 1] {
            let (m, remote) = try MultiMachineTests.machines(2)
            let (a, b) = (m[0], m[1])
            #expect(try a.addFile("n1", "the real n1").status == 0)
            #expect(try a.run(["list"]).status == 0)
            // n1's blob: the one in A's items/ that the remote does not hold.
            let id = try #require(try FileManager.default.contentsOfDirectory(atPath: a.v.dir + "/items").first {
                !FileManager.default.fileExists(atPath: remote + "/items/" + $0)
            })
            try FileManager.default.createDirectory(atPath: remote + "/inbox", withIntermediateDirectories: true)
            var junk = HostileDropIn()
            junk.itemID = try #require(Hex.decode(id))
            junk.kind = 2
            junk.name = Array(BackupItems.packName(junk.itemID).utf8)
            junk.size = 100
            try junk.drop(into: remote, item: try junk.item([UInt8](repeating: 0, count: 100)))
            #expect(try b.run(["pull"]).status == 0)
            #expect(try b.run(["list"]).status == 0)
            // Whoever pushes first holds the id on the remote; the other merges.
            let order = pushFirst == 0 ? [a, b, a] : [b, a, b]
            for machine in order { #expect(try machine.run(["push"]).status == 0) }
            for machine in [a, b] { #expect(try machine.run(["pull"]).status == 0) }
            for machine in [a, b] {
                let got = try machine.run(["get", "n1"])
                #expect(got.status == 0 && got.stdoutText == "the real n1", "\(pushFirst): \(got.stderr)")
                #expect(try machine.run(["check", "--read-data"]).status == 0, "\(pushFirst)")
            }
        }
    }

    // MARK: 4: prune plans, then waits out a grace

    /// Item 4 (on 4f9261d: prune took in the pack a `backup --to` had sent,
    /// found it unreferenced and deleted it; the snapshot that landed next
    /// was refused forever, though the backup had exited 0).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone")))
    func pruneWaitsOutTheGraceForABackupInFlight() throws {
        let f = try BackupFixture()
        let (remote, fingerprint, sender, source) = try f.remoteAndSender()
        let big = BackupFixture.random(1 << 20, seed: 37)
        try Data(big).write(to: URL(fileURLWithPath: source + "/big"))
        let r = try CLIHarness.run(["backup", source, "--to", remote, "--fingerprint", fingerprint, "--json"],
                                   environment: sender.environment(), cwd: sender.path, timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        let snapshot = try #require((try? JSONObject.parse(r.stdout))?["snapshot"] as? String)
        // In flight: the pack is there, the snapshot not yet.
        let aside = f.v.path + "/in-flight"
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: false)
        for ext in [".item", ".env"] {
            try FileManager.default.moveItem(atPath: remote + "/inbox/" + snapshot + ext, toPath: aside + "/" + snapshot + ext)
        }
        let pruned = try f.snapshots(["prune"])
        #expect(pruned.status == 0 && pruned.stderr.contains("deleted 0 unused packs"), "\(pruned.stderr)")
        // Its data and its trees, in two packs.
        #expect(pruned.stderr.contains("2 packs (") && pruned.stderr.contains("wait out the grace"), "\(pruned.stderr)")
        #expect(try f.v.run(["push"]).status == 0)

        for ext in [".item", ".env"] {
            try FileManager.default.moveItem(atPath: aside + "/" + snapshot + ext, toPath: remote + "/inbox/" + snapshot + ext)
        }
        let pull = try f.v.run(["pull"])
        #expect(pull.status == 0 && !pull.stderr.contains("refused"), "\(pull.stderr)")
        let out = f.v.path + "/out"
        let restored = try f.snapshots(["restore", snapshot, "--to", out])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(FileManager.default.contents(atPath: out + "/src/big") == Data(big))
    }

    /// The grace counts from the first prune that found a pack unused (its
    /// mark, kept in the manifest), not from the prune that runs now; a dry
    /// run changes nothing, --grace 0 deletes at once.
    @Test func theGraceCountsFromThePruneThatFirstFoundThePackUnused() throws {
        let f = try BackupFixture()
        try f.write("a", BackupRepackTests.content(81))
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        unlink(f.source + "/a")
        try f.write("b", BackupRepackTests.content(82))
        _ = try f.backup()
        let first = try f.snapshots(["forget", s1, "--prune"])
        #expect(first.status == 0 && first.stderr.contains("deleted 0 unused packs"), "\(first.stderr)")
        // s1's data and its trees, in two packs.
        #expect(first.stderr.contains("2 packs (") && first.stderr.contains("wait out the grace, the first until"), "\(first.stderr)")
        let before = try f.v.filesInVault()
        sleep(2)
        let dry = try f.snapshots(["prune", "--grace", "2s", "--dry-run"])
        #expect(dry.stderr.contains("would delete 2 unused packs"), "\(dry.stderr)")
        #expect(try f.v.filesInVault() == before)
        let waits = try f.snapshots(["prune", "--grace", "1h"])
        #expect(waits.stderr.contains("deleted 0 unused packs"), "\(waits.stderr)")
        let due = try f.snapshots(["prune", "--grace", "2s"])
        #expect(due.status == 0 && due.stderr.contains("deleted 2 unused packs"), "\(due.stderr)")
        try BackupRepackTests.restores(f, "latest", ["b": BackupRepackTests.content(82)])
        #expect(try f.snapshots(["prune", "--grace", "soon"]).status == 2)
        #expect(try f.snapshots(["list", "--grace", "0"]).status == 2)
    }

    /// A backup waiting in the inbox whose record does not read stops prune
    /// (on 4f9261d it was skipped, and its packs were not pinned).
    @Test func anUnreadableWaitingSnapshotStopsPrune() throws {
        let f = try BackupFixture()
        try f.write("a", BackupRepackTests.content(91))
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        _ = try f.snapshots([])
        var junk = HostileDropIn()
        junk.kind = 3
        junk.name = Array(BackupItems.snapshotName(junk.itemID).utf8)
        junk.size = 64
        try junk.drop(into: f.v.dir, item: try junk.item([UInt8](repeating: 7, count: 64)))
        #expect(try f.snapshots(["forget", s1]).status == 0)
        let before = try f.v.filesInVault()
        let r = try f.snapshots(["prune", "--grace", "0"])
        #expect(r.status == 14 && r.stderr.contains("a backup waiting in the inbox cannot be read (inbox/\(junk.blob).item)"), "\(r.stderr)")
        #expect(r.stderr.contains("nothing was deleted"), "\(r.stderr)")
        #expect(try f.v.filesInVault() == before)
    }
}

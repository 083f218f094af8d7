import Foundation
import Testing
import TestSupport

/// Issue 27: many machines, one vault. Real `vault` binaries with a HOME
/// each (their own state directories), one remote: push and pull merge,
/// a push without the password sends drop-ins, clone takes a remote's name.
@Suite("Many machines, one vault", .serialized)
struct MultiMachineTests {
    /// One machine of a test, and how it reaches the remote.
    struct Machine {
        let v: VaultFixture
        /// rclone's variables for the remote (empty for a plain path).
        let env: [String: String]

        /// `vault ARGS` with the password.
        func run(_ args: [String]) throws -> CLIHarness.Result { Self.trace(v, args, try v.run(args, env, timeout: 120)) }
        /// `vault ARGS` with no way to get the password (as from cron).
        func bare(_ args: [String]) throws -> CLIHarness.Result { Self.trace(v, ["(no password)"] + args, try v.add(args, env)) }

        /// VAULT_MERGE_CLI_TRACE=1 prints every command and what it said,
        /// to follow a replayed schedule (VAULT_MERGE_CLI_SEED).
        static let tracing = ProcessInfo.processInfo.environment["VAULT_MERGE_CLI_TRACE"] != nil
        func dump(_ k: Int) {
            let listed = try? ReferenceReaderTests().python(["list", v.dir, v.passwordFile], v).stdoutText
            let inbox = (try? FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox")) ?? []
            print("  \(k): \(listed?.split(separator: "\n").joined(separator: " | ") ?? "?") inbox: \(inbox.sorted())")
        }
        static func trace(_ v: VaultFixture, _ args: [String], _ r: CLIHarness.Result) -> CLIHarness.Result {
            if tracing { print("[\(v.path)] vault \(args.joined(separator: " ")) -> \(r.status)\n\(r.stderr)", terminator: "") }
            return r
        }

        /// (name, versions, size) of every item, sorted; fails on a list that fails.
        func items(sourceLocation: SourceLocation = #_sourceLocation) throws -> [Listed] {
            let r = try run(["list", "--json"])
            #expect(r.status == 0, "list: \(r.stderr)", sourceLocation: sourceLocation)
            let top = try JSONObject.parse(r.stdout)
            return (top["items"] as? [[String: Any]] ?? []).map {
                Listed(name: $0["name"] as? String ?? "?", versions: ($0["versions"] as? NSNumber)?.intValue ?? 0,
                       size: ($0["size"] as? NSNumber)?.uint64Value ?? 0)
            }.sorted { $0.name < $1.name }
        }

        func addFile(_ name: String, _ contents: String) throws -> CLIHarness.Result {
            try bare(["add", "--name", name, try v.write("src-" + UUID().uuidString, Array(contents.utf8))])
        }

        /// Adds, takes in (an unlock) and pushes, each of which must succeed.
        func addAndPush(_ name: String, _ contents: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            for r in [try addFile(name, contents), try run(["list"]), try run(["push"])] {
                #expect(r.status == 0, "\(r.stderr)", sourceLocation: sourceLocation)
            }
        }
    }

    struct Listed: Hashable, CustomStringConvertible {
        let name: String, versions: Int, size: UInt64
        var description: String { "\(name)×\(versions)" }
    }

    /// Machine 0 makes the vault (one item, "seed") and pushes it to
    /// `target` (nil: a plain directory in its sandbox); the others clone
    /// it into their own HOMEs, where it is their remote 'origin'.
    static func machines(_ n: Int, target: String? = nil, env: [String: String] = [:]) throws -> ([Machine], String) {
        let first = Machine(v: try VaultFixture(), env: env)
        let remote = target ?? first.v.path + "/remote"
        #expect(try first.run(["remote", "add", "origin", remote]).status == 0)
        #expect(try first.addFile("seed", "seed").status == 0)
        #expect(try first.run(["list"]).status == 0)
        let pushed = try first.run(["push"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        var all = [first]
        for _ in 1..<n {
            let m = Machine(v: try VaultFixture(password: first.v.password, create: false), env: env)
            let clone = try m.run(["clone", remote, m.v.dir])
            #expect(clone.status == 0, "\(clone.stderr)")
            all.append(m)
        }
        return (all, remote)
    }

    /// The issue's first paragraph, followed: two machines that each added
    /// a file and pushed end up with both, no refusal, no rollback, no
    /// --accept-rollback.
    @Test func twoMachinesThatEachAddedAFileMerge() throws {
        let (m, remote) = try Self.machines(2)
        let (laptop, desktop) = (m[0], m[1])
        try laptop.addAndPush("meter.txt", "meter")
        #expect(try desktop.addFile("x.txt", "x").status == 0)
        let push = try desktop.run(["push"])
        #expect(push.status == 0, "\(push.stderr)")
        let lines = push.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("vault: merged 'origin' (generation ") == true, "\(lines)")
        #expect(lines.first?.contains(") with this vault's changes into generation ") == true, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("vault: pushed to 'origin': ") }, "\(lines)")
        let pull = try laptop.run(["pull"])
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(firstLine(pull.stderr).hasPrefix("vault: pulled generation "), "\(pull.stderr)")
        #expect(try laptop.items().map(\.name) == ["meter.txt", "seed", "x.txt"])
        #expect(try laptop.items() == desktop.items())
        #expect(try desktop.run(["pull"]).stderr == "vault: 'origin' has nothing new\n")

        // The laptop moves ahead, then clones the remote by its name: a
        // new copy, not a rollback of the laptop's vault.
        #expect(try laptop.addFile("later.txt", "later").status == 0)
        #expect(try laptop.run(["list"]).status == 0)
        let dir = laptop.v.path + "/merged"
        let clone = try laptop.run(["clone", "origin", dir])
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(clone.stderr.contains("cloned \(remote) into"), "\(clone.stderr)")
        let listed = try CLIHarness.run(["--vault", dir, "--password-file", laptop.v.passwordFile, "list"],
                                        environment: laptop.v.environment(), cwd: laptop.v.path)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try laptop.run(["list"]).status == 0, "the laptop's own vault still opens")
    }

    /// `vault add; vault push` with no password while the remote moved on:
    /// the drop-in goes to the remote's inbox, in one line, exit 0. Each
    /// drop-in is taken in once, whichever machine takes it first, and one
    /// taken in and removed elsewhere does not come back.
    @Test func aPushWithoutThePasswordSendsDropIns() throws {
        let (m, remote) = try Self.machines(2)
        let (a, b) = (m[0], m[1])
        try a.addAndPush("from-a", "a")

        // B, as from cron: add and push, no password.
        #expect(try b.addFile("todo.txt", "todo").status == 0)
        let cron = try b.bare(["push"])
        #expect(cron.status == 0, "\(cron.stderr)")
        #expect(cron.stderr == "vault: 'origin' changed on another machine: sent 1 drop-in to its inbox; merging this vault's other changes needs the password ('vault push' or 'vault pull' with it)\n")
        let inbox = try FileManager.default.contentsOfDirectory(atPath: remote + "/inbox")
        #expect(inbox.count == 2, "\(inbox)")
        // Sent once: a second cron push sends nothing more.
        #expect(try b.bare(["push"]).stderr.contains("sent no drop-ins"))

        // A takes it in first, and clears it from the remote with its push.
        let pull = try a.run(["pull"])
        #expect(pull.stderr.contains("vault: took in 1 drop-in from the inbox of 'origin'\nhint: the next 'vault push origin' clears it from there\n"), "\(pull.stderr)")
        #expect(!pull.stderr.contains("nothing new"), "one pull, one story: \(pull.stderr)")
        let push = try a.run(["push"])
        #expect(push.stderr.contains("cleared 1 drop-in from the remote's inbox"), "\(push.stderr)")
        // B, which still has it waiting, pulls: once, not twice.
        #expect(try b.run(["pull"]).status == 0)
        #expect(try b.items() == a.items())
        #expect(try b.items().first { $0.name == "todo.txt" }?.versions == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: b.v.dir + "/inbox").isEmpty)

        // B takes its own drop-in in first (any unlock), A then pulls it.
        #expect(try b.addFile("second.txt", "second").status == 0)
        let sent = try b.bare(["push"])
        #expect(sent.stderr.contains("sent 1 drop-in to the inbox of 'origin'"), "\(sent.stderr)")
        #expect(try b.run(["list"]).status == 0)
        #expect(try b.run(["push"]).stderr.contains("cleared 1 drop-in"))
        #expect(try a.run(["pull"]).status == 0)
        #expect(try a.items() == b.items())
        #expect(try a.items().first { $0.name == "second.txt" }?.versions == 1)

        // Taken in on A and removed there; B takes in its waiting copy on
        // its next unlock, and its pull removes it again (it was removed
        // since): it does not come back.
        #expect(try b.addFile("gone.txt", "gone").status == 0)
        #expect(try b.bare(["push"]).status == 0)
        #expect(try a.run(["pull"]).status == 0)
        #expect(try a.run(["remove", "gone.txt"]).status == 0)
        #expect(try a.run(["push"]).status == 0)
        #expect(try b.run(["pull"]).status == 0)
        #expect(try !b.items().map(\.name).contains("gone.txt"))
        #expect(try b.run(["push"]).status == 0)
        #expect(try a.run(["pull"]).status == 0)
        #expect(try a.items() == b.items())
        #expect(try !a.items().map(\.name).contains("gone.txt"))
        for x in [a, b] { #expect(try x.run(["check", "--read-data"]).status == 0) }
    }

    /// The sender's side of the same rule (found by the random schedules
    /// below): B sends a drop-in to the remote's inbox, takes it in itself
    /// and removes it; A meanwhile took it in from that inbox and pushed it.
    /// B's merge must count it as shared, so B's remove wins on both
    /// machines and the item does not come back.
    @Test func aDropInItsSenderTookInAndRemovedDoesNotComeBack() throws {
        let (m, _) = try Self.machines(2)
        let (a, b) = (m[0], m[1])
        #expect(try b.addFile("note.txt", "note").status == 0)
        try a.addAndPush("from-a", "a")
        #expect(try b.bare(["push"]).stderr.contains("sent 1 drop-in"))
        #expect(try b.run(["remove", "--yes", "note.txt"]).status == 0)
        #expect(try a.run(["pull"]).status == 0)
        #expect(try a.items().map(\.name).contains("note.txt"), "A took it in from the remote's inbox")
        #expect(try a.run(["push"]).status == 0)
        let pull = try b.run(["pull"])
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(try !b.items().map(\.name).contains("note.txt"), "removed on B, so gone on B")
        #expect(try b.run(["push"]).status == 0)
        #expect(try a.run(["pull"]).status == 0)
        #expect(try a.items() == b.items())
        #expect(try a.items().map(\.name) == ["from-a", "seed"])
    }

    /// A pull that merged (and no push after it), then a second merge: the
    /// first one's "theirs" is the base of the second, so what the other
    /// machine removed in between goes here too (found by the random
    /// schedules below: the base was written with the merge's 8-byte
    /// generation still in front, so it did not open, and the second merge
    /// took nothing as removed). A base an older vault left that way is
    /// read past those 8 bytes.
    @Test(arguments: [false, true]) func aRemoveBetweenTwoMergesIsKept(olderBase: Bool) throws {
        let (m, _) = try Self.machines(2)
        let (a, b) = (m[0], m[1])
        try a.addAndPush("x", "x")
        #expect(try b.run(["pull"]).status == 0)
        try a.addAndPush("y", "y")
        #expect(try b.addFile("z", "z").status == 0)
        let merged = try b.run(["pull"])
        #expect(merged.stderr.hasPrefix("vault: merged 'origin'"), "\(merged.stderr)")
        if olderBase {
            let path = b.v.dir + "/remote.origin.base"
            let base = try Data(contentsOf: URL(fileURLWithPath: path))
            try (Data([0, 0, 0, 0, 0, 0, 0, 9]) + base).write(to: URL(fileURLWithPath: path))
        }
        #expect(try a.run(["remove", "--yes", "x"]).status == 0)
        #expect(try a.run(["push"]).status == 0)
        let again = try b.run(["push"])
        #expect(again.stderr.hasPrefix("vault: merged 'origin'"), "\(again.stderr)")
        #expect(try b.items().map(\.name) == ["seed", "y", "z"])
        #expect(try a.run(["pull"]).status == 0)
        #expect(try a.items() == b.items())
    }

    /// A remove made on one machine and pulled by the other as a plain
    /// fetch (nothing to merge): the blob leaves the puller's items/ too,
    /// and its next push does not send it back to the remote (it did: the
    /// removed item's ciphertext came back there, named by no manifest).
    @Test func aRemovePulledByFetchDoesNotComeBackWithTheNextPush() throws {
        let (m, remote) = try Self.machines(2)
        let (a, b) = (m[0], m[1])
        try a.addAndPush("x", "x")
        #expect(try b.run(["pull"]).status == 0)
        let withX = Set(try FileManager.default.contentsOfDirectory(atPath: remote + "/items"))
        #expect(try b.run(["remove", "--yes", "x"]).status == 0)
        #expect(try b.run(["push"]).status == 0)
        let withoutX = Set(try FileManager.default.contentsOfDirectory(atPath: remote + "/items"))
        #expect(withoutX.count == withX.count - 1)
        let pull = try a.run(["pull"])
        #expect(pull.stderr.hasPrefix("vault: pulled generation"), "\(pull.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: a.v.dir + "/items")) == withoutX)
        try a.addAndPush("y", "y")
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: remote + "/items"))
        #expect(after.isSuperset(of: withoutX) && after.count == withoutX.count + 1 && after.isDisjoint(with: withX.subtracting(withoutX)))
        #expect(try a.items().map(\.name) == ["seed", "y"])
    }

    /// Both renamed one item differently, and one removed what the other
    /// changed: both kept, under names that say so, and listed.
    @Test func conflictsAreKeptAndListed() throws {
        let (m, _) = try Self.machines(2)
        let (a, b) = (m[0], m[1])
        try a.addAndPush("plan.txt", "v1")
        #expect(try b.run(["pull"]).status == 0)
        #expect(try a.run(["rename", "seed", "seed-a"]).status == 0)
        #expect(try b.run(["rename", "seed", "seed-b"]).status == 0)
        #expect(try a.run(["remove", "plan.txt"]).status == 0)
        #expect(try b.addFile("plan.txt", "v2").status == 0)
        #expect(try a.run(["push"]).status == 0)
        let merged = try b.run(["push"])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(merged.stderr.contains("vault: warning: conflict: 'plan.txt' was removed there and changed here: kept as 'plan.txt (conflict)'"), "\(merged.stderr)")
        #expect(merged.stderr.contains("vault: warning: conflict: 'seed' was renamed to 'seed-b' here and to 'seed-a' there: kept as 'seed-a (conflict)'"), "\(merged.stderr)")
        #expect(try a.run(["pull"]).status == 0)
        let listed = try a.items()
        #expect(listed == (try b.items()))
        #expect(listed.map(\.description) == ["plan.txt (conflict)×2", "seed-a (conflict)×1"], "\(listed)")
    }

    /// A rekey on one side while the other changed: refused, exit 11, with
    /// what to do; nothing changes.
    @Test func aRekeyOnEitherSideIsRefused() throws {
        let (m, _) = try Self.machines(2)
        let (a, b) = (m[0], m[1])
        #expect(try a.run(["rekey", "--yes"]).status == 0)
        #expect(try a.run(["push"]).status == 0)
        #expect(try b.addFile("b.txt", "b").status == 0)
        #expect(try b.run(["list"]).status == 0)
        let before = try HostileRemoteTests.snapshot(b.v.dir)
        for args in [["pull"], ["push"]] {
            let r = try b.run(args)
            #expect(r.status == 11, "\(args): \(r.stderr)")
            #expect(firstLine(r.stderr) == "vault: this vault and the remote have different keys: one of them was rekeyed since they were last in step", "\(r.stderr)")
            #expect(r.stderr.contains("hint: nothing was changed; clone the remote into a new directory ('vault clone NAME DIR')"), "\(r.stderr)")
            #expect(try HostileRemoteTests.snapshot(b.v.dir) == before)
        }
    }

    // MARK: random schedules through the CLI

    /// Three machines in random interleavings of add (a new item, or a new
    /// version of one), remove, rename, forget, push with and without the
    /// password, and pull; then everyone syncs twice. All list the same
    /// items and versions; every item no one removed, renamed or trimmed
    /// is there with one version per add; every item removed is gone
    /// unless a conflict kept it; every byte authenticates, here and on
    /// the remote. Even schedules (and seeds) use a plain directory, odd
    /// ones SeaweedFS (S3). VAULT_MERGE_CLI_SCHEDULES sets how many (default 2). Each
    /// schedule has its own seed, random each run and named in every
    /// failure with the steps it took; VAULT_MERGE_CLI_SEED=S replays
    /// schedule S alone (item ids and times still differ between runs).
    /// VAULT_MERGE_CLI_STEPS sets a schedule's length (default 14; a replay
    /// needs the length it failed with).
    @Test func randomSchedulesConvergeThroughTheCLI() throws {
        let env = ProcessInfo.processInfo.environment
        let count = max(2, Int(env["VAULT_MERGE_CLI_SCHEDULES"] ?? "") ?? 2)
        let replay = env["VAULT_MERGE_CLI_SEED"].flatMap { UInt64($0) }
        var seeds = SystemRandomNumberGenerator()
        for schedule in 0..<(replay == nil ? count : 1) {
            // A seed's parity names its backend, so a replay takes the same one.
            let seed = replay ?? (seeds.next() & ~1 | UInt64(schedule % 2))
            var g = SplitMix(state: seed)
            if seed % 2 == 1 {
                let s3 = try SeaweedS3.get()
                try Self.schedule(schedule, seed: seed, target: s3.newTarget(), env: s3.rcloneEnvironment(), &g)
            } else {
                try Self.schedule(schedule, seed: seed, target: nil, env: [:], &g)
            }
        }
    }


    static func schedule(_ number: Int, seed: UInt64, target: String?, env: [String: String], _ g: inout SplitMix) throws {
        let (m, _) = try Self.machines(3, target: target, env: env)
        var adds: [String: Int] = ["seed": 1]
        var touched = Set<String>(), removed = Set<String>()
        // Names whose remover held fewer versions than were ever added: a
        // version it never saw (a drop-in still in an inbox, or an item of
        // the same name that another machine started) rightly survives.
        // A remover that held every version added must make it go.
        var mayReturn = Set<String>()
        var serial = 0
        var steps: [String] = []
        let label = "schedule \(number) (VAULT_MERGE_CLI_SEED=\(seed))"
        let length = max(1, Int(ProcessInfo.processInfo.environment["VAULT_MERGE_CLI_STEPS"] ?? "") ?? 14)
        for _ in 0..<length {
            let i = Int.random(in: 0..<3, using: &g)
            let x = m[i]
            let pool = adds.keys.sorted()
            let op = Int.random(in: 0..<9, using: &g)
            steps.append("\(i):\(op)")
            func named(_ name: String) -> String { steps[steps.count - 1] += " " + name; return name }
            // Traced: each machine's items and inbox after each step, read
            // by the Python reader (which absorbs nothing, so the schedule
            // runs as it would untraced).
            defer { if Machine.tracing { print("== after \(steps.last ?? "")"); m.enumerated().forEach { $1.dump($0) } } }
            switch op {
            case 0, 1:
                serial += 1
                let name = named("n\(serial)")
                #expect(try x.addFile(name, "\(name) on \(x.v.path)").status == 0)
                adds[name, default: 0] += 1
                removed.remove(name)
            case 2:
                let name = named(pool.randomElement(using: &g)!)
                #expect(try x.addFile(name, "\(name) again \(serial)").status == 0)
                adds[name, default: 0] += 1
                removed.remove(name)
            case 3:
                let name = named(pool.randomElement(using: &g)!)
                // What the remover holds (this list absorbs what the remove's unlock would).
                let held = try x.items().first { $0.name == name }?.versions ?? 0
                if try x.run(["remove", "--yes", name]).status == 0 {
                    touched.insert(name)
                    removed.insert(name)
                    if held < adds[name, default: 0] { mayReturn.insert(name) }
                }
            case 4:
                let name = named(pool.randomElement(using: &g)!)
                serial += 1
                if try x.run(["rename", name, "r\(serial)"]).status == 0 { touched.formUnion([name, "r\(serial)"]) }
            case 5:
                let name = named(pool.randomElement(using: &g)!)
                if try x.run(["forget", name, "--keep-last", "1"]).status == 0 { touched.insert(name) }
            case 6:
                let r = try x.bare(["push"])
                #expect(r.status == 0, "\(label): push without the password: \(r.stderr)")
            case 7:
                let r = try x.run(["push"])
                #expect(r.status == 0, "\(label): push: \(r.stderr)")
            default:
                let r = try x.run(["pull"])
                #expect(r.status == 0, "\(label): pull: \(r.stderr)")
            }
        }
        // Everyone syncs twice: a pull (which takes in what waits here and
        // in the remote's inbox), then a push. Pulls last, as before, took
        // in the remote's drop-ins on each machine apart: two versions of
        // one name added on two machines were numbered in the order each
        // machine happened to take them in, until the next push and pull
        // merged them (VAULT_MERGE_CLI_SEED=6393689522566930827; the merge
        // orders them by when they were added, on every machine alike).
        for _ in 0..<2 {
            for x in m {
                let pulled = try x.run(["pull"])
                #expect(pulled.status == 0, "\(label): final pull: \(pulled.stderr)")
                let pushed = try x.run(["push"])
                #expect(pushed.status == 0, "\(label): final push: \(pushed.stderr)")
            }
        }

        let final = try m[0].items()
        for (k, x) in m.enumerated().dropFirst() {
            let theirs = try x.items()
            #expect(theirs == final, "\(label) \(steps): the machines differ: 0 has \(final), \(k) has \(theirs)")
        }
        let byName = Dictionary(final.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for (name, n) in adds where !touched.contains(name) {
            #expect(byName[name]?.versions == n, "\(label) \(steps): '\(name)' added \(n) times: \(final)")
        }
        for name in removed {
            #expect(byName[name] == nil || byName[name + " (conflict)"] != nil || adds[name] == nil || mayReturn.contains(name),
                    "\(label) \(steps): removed '\(name)' came back: \(final)")
        }
        for x in m {
            let check = try x.run(["check", "--read-data"])
            #expect(check.status == 0, "\(label): \(check.stderr)")
        }
        let remoteCheck = try m[0].run(["check", "--remote", "origin", "--read-data"])
        #expect(remoteCheck.status == 0, "\(label): \(remoteCheck.stderr)")
    }
}

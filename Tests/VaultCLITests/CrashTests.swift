import Foundation
import Testing

/// The crash harness: `vault add`, the absorb inside `vault list`, and
/// `vault passwd` are SIGKILLed at random moments spread over their real
/// duration (measured first, uninterrupted), and after every kill:
///
/// - the vault opens with the right password (after passwd: exactly one of
///   the old and the new one);
/// - `check --read-data` exits 0 (leftovers are only warnings);
/// - every add that reported success (in this run or any earlier one) is
///   listed exactly once, with its size and content (SHA-256) intact, and
///   nothing is listed that was never added.
///
/// `VAULT_CRASH_RUNS` (default 50) sets the number of kills per operation;
/// `make crashtest` runs more.
@Suite struct CrashTests {
    static let runs: Int = {
        let value = ProcessInfo.processInfo.environment["VAULT_CRASH_RUNS"].flatMap { Int($0) }
        return max(value ?? 50, 1)
    }()

    /// What the vault must hold: name -> (size, SHA-256).
    struct Expected {
        /// Adds that reported success: must be listed.
        var required: [String: (size: Int, hash: String)] = [:]
        /// Adds killed before they reported: may be listed (then intact), or not.
        var optional: [String: (size: Int, hash: String)] = [:]
        /// Names whose content was already compared (content never changes).
        var compared: Set<String> = []
    }

    /// The assertions after a kill. Returns the password file that opened
    /// the vault (the first of `passwords` that did).
    @discardableResult
    static func verify(_ v: VaultFixture, _ expected: inout Expected, passwords: [String], run: Int,
                       sourceLocation: SourceLocation = #_sourceLocation) throws -> String? {
        // The vault opens with the right password, and only with it.
        var opened: [String] = []
        var listing: CLIHarness.Result?
        for file in passwords {
            let r = try v.run(["list", "--json"], password: file)
            if r.status == 0 { opened.append(file); listing = r } else {
                #expect(r.status == 12, "run \(run): list with \(file): \(r.status) \(r.stderr)", sourceLocation: sourceLocation)
            }
        }
        #expect(opened.count == 1, "run \(run): the vault opened with \(opened) of \(passwords)", sourceLocation: sourceLocation)
        guard let password = opened.first, let listing else { return nil }

        let check = try v.run(["check", "--read-data"], password: password)
        #expect(check.status == 0, "run \(run): check --read-data: \(check.stderr)", sourceLocation: sourceLocation)
        for line in check.stderr.split(separator: "\n") {
            let allowed = line.hasPrefix("vault: no problems found") || line.hasPrefix("vault: warning: leftover")
                || line.hasPrefix("vault: warning: orphan")
                || line.hasPrefix("hint: ")
            #expect(allowed, "run \(run): check said \(line)", sourceLocation: sourceLocation)
        }

        let items = try ListedItem.parse(listing.stdout)
        let names = items.map(\.name)
        #expect(Set(names).count == names.count, "run \(run): duplicate names", sourceLocation: sourceLocation)
        for name in expected.required.keys {
            #expect(names.contains(name), "run \(run): '\(name)' (reported added) is not listed",
                    sourceLocation: sourceLocation)
        }
        var toCompare: [String] = []
        for item in items {
            guard let want = expected.required[item.name] ?? expected.optional[item.name] else {
                Issue.record("run \(run): '\(item.name)' is listed but was never added (a duplicate?)",
                             sourceLocation: sourceLocation)
                continue
            }
            #expect(item.size == UInt64(want.size), "run \(run): size of '\(item.name)'", sourceLocation: sourceLocation)
            #expect(item.origin == "dropped-in", sourceLocation: sourceLocation)
            if !expected.compared.contains(item.name) { toCompare.append(item.name) }
        }
        // Content of items not compared before: one restore for all of them.
        if !toCompare.isEmpty {
            let out = v.path + "/restored-\(run)"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: out) }
            let r = try v.run(["restore"] + toCompare + ["--to", out], password: password)
            #expect(r.status == 0, "run \(run): restore: \(r.stderr)", sourceLocation: sourceLocation)
            for name in toCompare {
                let want = expected.required[name] ?? expected.optional[name]!
                #expect(try sha256(file: out + "/" + name) == want.hash, "run \(run): content of '\(name)'",
                        sourceLocation: sourceLocation)
                expected.compared.insert(name)
            }
        }
        return password
    }

    /// A delay spread over [0, 1.2 × duration): from before vault started
    /// its work to just after it would have finished.
    static func delay(within duration: Double) -> Double { Double.random(in: 0..<(duration * 1.2)) }

    /// How long the operation takes now, uninterrupted: the median of three
    /// runs through the same `timeout` wrapper as the killed runs. Measured
    /// before the first kill and again every tenth run, since the load on the
    /// machine (other tests in parallel) changes.
    static func calibrate(_ operation: () throws -> CLIHarness.Result) throws -> Double {
        var times: [Double] = []
        for _ in 0..<3 {
            var r: CLIHarness.Result!
            times.append(try measure { r = try operation() })
            #expect(r.status == 0, "uninterrupted run: \(r.stderr)")
        }
        return times.sorted()[1]
    }

    static let noKill = 600.0

    /// Runs `operation` killed after a delay drawn within `duration`. A run
    /// that finished in under half of `duration` shows the measurement was
    /// taken under a burst of load that has passed (other suites in
    /// parallel): `duration` narrows to that run's time, so that the next
    /// kills land inside the work again. Without it, a fast operation
    /// measured slow can outrun every kill of its ten runs (CI at stop 63:
    /// 12 prunes of 12 finished before their kill).
    static func killedRun(within duration: inout Double,
                          _ operation: (Double) throws -> CLIHarness.Result) rethrows -> CLIHarness.Result {
        var r: CLIHarness.Result!
        let took = try measure { r = try operation(delay(within: duration)) }
        if r.status == 0 && took < duration / 2 { duration = took }
        return r
    }

    @Test func killedAdd() throws {
        let v = try VaultFixture()
        var expected = Expected()
        var serial = 0
        /// Adds a new 2–4 MiB file, killed after `delay` seconds; records the outcome.
        func add(killAfter delay: Double) throws -> CLIHarness.Result {
            serial += 1
            let content = randomBytes(Int.random(in: (2 << 20)...(4 << 20)))
            let name = "add-\(serial).bin"
            let source = try v.write(name, content)
            defer { try? FileManager.default.removeItem(atPath: source) }
            let r = try runKilled(after: delay, ["--vault", v.dir, "add", source], environment: v.environment())
            if r.status == 0 {
                expected.required[name] = (content.count, sha256(content))
            } else {
                #expect(r.status == 137, "add \(name) exited \(r.status): \(r.stderr)")
                expected.optional[name] = (content.count, sha256(content))
            }
            return r
        }
        var duration = 0.0, killed = 0
        for run in 0..<Self.runs {
            if run % 10 == 0 { duration = try Self.calibrate { try add(killAfter: Self.noKill) } }
            if try Self.killedRun(within: &duration, { try add(killAfter: $0) }).status != 0 { killed += 1 }
            try Self.verify(v, &expected, passwords: [v.passwordFile], run: run)
            if run % 10 == 9 { try Self.removeAll(v, &expected) }
        }
        // The harness is worth something only if it killed adds and let others finish.
        #expect(killed > 0)
        #expect(Self.runs < 10 || killed < Self.runs)
    }

    /// One `vault add` of many small files, whose drop-ins land in groups
    /// (DropInBatch), killed at any moment: every file it said it added is
    /// listed intact, the others are listed intact or not at all.
    @Test func killedManyFileAdd() throws {
        let v = try VaultFixture()
        var expected = Expected()
        var serial = 0
        let files = 300   // three groups of drop-ins
        func add(killAfter delay: Double) throws -> CLIHarness.Result {
            var paths: [String] = [], contents: [String: (size: Int, hash: String)] = [:]
            for _ in 0..<files {
                serial += 1
                let content = randomBytes(Int.random(in: 1...4000))
                let name = "many-\(serial).txt"
                paths.append(try v.write(name, content))
                contents[name] = (content.count, sha256(content))
            }
            defer { for p in paths { try? FileManager.default.removeItem(atPath: p) } }
            let r = try runKilled(after: delay, ["--vault", v.dir, "add"] + paths, environment: v.environment())
            #expect(r.status == 0 || r.status == 137, "add exited \(r.status): \(r.stderr)")
            let said = Set(r.stderr.split(separator: "\n").compactMap { line -> String? in
                guard let start = line.range(of: "added '") else { return nil }
                return line[start.upperBound...].split(separator: "'").first.map(String.init)
            })
            if r.status == 0 { #expect(said.count == files, "a finished add names every file: \(r.stderr)") }
            for (name, want) in contents {
                if said.contains(name) { expected.required[name] = want } else { expected.optional[name] = want }
            }
            return r
        }
        var duration = 0.0, killed = 0
        for run in 0..<Self.runs {
            if run % 10 == 0 { duration = try Self.calibrate { try add(killAfter: Self.noKill) } }
            if try Self.killedRun(within: &duration, { try add(killAfter: $0) }).status != 0 { killed += 1 }
            try Self.verify(v, &expected, passwords: [v.passwordFile], run: run)
            if run % 10 == 9 { try Self.removeAll(v, &expected) }
        }
        #expect(killed > 0)
        #expect(Self.runs < 10 || killed < Self.runs)
    }

    /// Empties the vault (every item verified by now), so that the
    /// `check --read-data` after each kill reads tens, not hundreds, of MiB
    /// (the suite keeps to its time budget, and `make crashtest` scales
    /// linearly); "every earlier successful add is still there" then spans
    /// the last ten runs. The removal is itself checked.
    static func removeAll(_ v: VaultFixture, _ expected: inout Expected) throws {
        let names = try v.listed().map(\.name)
        #expect(Set(names) == Set(expected.required.keys).union(Set(names).intersection(expected.optional.keys)))
        if !names.isEmpty {
            let r = try v.run(["remove"] + names)
            #expect(r.status == 0, "remove: \(r.stderr)")
        }
        #expect(try v.listed() == [])
        #expect(try v.filesInVault().filter { $0.hasPrefix("items/") || $0.hasPrefix("inbox/") } == [])
        expected = Expected()
    }

    @Test func killedAbsorbInsideList() throws {
        let v = try VaultFixture()
        var expected = Expected()
        var serial = 0
        let waiting = 4
        /// Drops `waiting` new files in with one `vault add` (never killed).
        func dropIn() throws {
            var paths: [String] = []
            for _ in 0..<waiting {
                serial += 1
                let content = randomBytes(Int.random(in: 1...300_000))
                let name = "drop-\(serial).dat"
                paths.append(try v.write(name, content))
                expected.required[name] = (content.count, sha256(content))
            }
            let r = try v.add(["add"] + paths)
            #expect(r.status == 0, "add: \(r.stderr)")
            for p in paths { try FileManager.default.removeItem(atPath: p) }
        }
        func list(killAfter delay: Double) throws -> CLIHarness.Result {
            try runKilled(after: delay, ["--vault", v.dir, "--password-file", v.passwordFile, "list"],
                          environment: v.environment())
        }
        var duration = 0.0, killed = 0
        for run in 0..<Self.runs {
            if run % 10 == 0 {
                // The list being timed absorbs as many drop-ins as the killed ones do.
                var times: [Double] = []
                for _ in 0..<3 {
                    try dropIn()
                    var r: CLIHarness.Result!
                    times.append(try measure { r = try list(killAfter: Self.noKill) })
                    #expect(r.status == 0, "uninterrupted list: \(r.stderr)")
                }
                duration = times.sorted()[1]
            }
            try dropIn()
            let r = try Self.killedRun(within: &duration) { try list(killAfter: $0) }
            if r.status != 0 {
                #expect(r.status == 137, "run \(run): list exited \(r.status): \(r.stderr)")
                killed += 1
            }
            try Self.verify(v, &expected, passwords: [v.passwordFile], run: run)
            #expect(try v.info()["waiting_drop_ins"] as? Int == 0, "run \(run): drop-ins left after recovery")
            if run % 10 == 9 { try Self.removeAll(v, &expected) }  // keeps `make crashtest` (500 runs) linear
        }
        #expect(killed > 0)
    }

    @Test func killedPasswd() throws {
        // A less cheap KDF (8 MiB) so the phases of passwd (unlock, new key,
        // temp header, verify, rename) take distinct, measurable time.
        let v = try VaultFixture(create: false)
        let created = try v.run(["init", "--kdf-memory", "8", "--kdf-passes", "1"])
        #expect(created.status == 0, "\(created.stderr)")
        var expected = Expected()
        var serial = 0
        func dropIn() throws {
            serial += 1
            let content = randomBytes(Int.random(in: 1...100_000))
            let name = "kept-\(serial).txt"
            let path = try v.write(name, content)
            let r = try v.add(["add", path])
            #expect(r.status == 0)
            expected.required[name] = (content.count, sha256(content))
            try FileManager.default.removeItem(atPath: path)
        }
        for _ in 0..<3 { try dropIn() }

        var current = v.passwordFile
        var generation = 0
        func passwd(killAfter delay: Double) throws -> (CLIHarness.Result, next: String) {
            generation += 1
            let next = try v.sandbox.file("password-\(generation)", "password generation \(generation) ✓\n")
            let r = try runKilled(after: delay,
                                  ["--vault", v.dir, "--password-file", current, "passwd", "--new-password-file", next],
                                  environment: v.environment())
            return (r, next)
        }
        var duration = 0.0, killed = 0, changed = 0
        for run in 0..<Self.runs {
            if run % 10 == 0 {
                duration = try Self.calibrate {
                    let (r, next) = try passwd(killAfter: Self.noKill)
                    if r.status == 0 { current = next }
                    return r
                }
            }
            if run % 5 == 0 { try dropIn() }  // passwd also absorbs what waits
            var next = ""
            let r = try Self.killedRun(within: &duration) { delay in
                let (r, written) = try passwd(killAfter: delay)
                next = written
                return r
            }
            if r.status != 0 {
                #expect(r.status == 137, "run \(run): passwd exited \(r.status): \(r.stderr)")
                killed += 1
            }
            guard let opened = try Self.verify(v, &expected, passwords: [current, next], run: run) else { break }
            if r.status == 0 { #expect(opened == next, "run \(run): passwd reported success but the old password opens") }
            if opened == next { changed += 1 }
            current = opened
        }
        #expect(killed > 0)
        // Over many runs, kills land on both sides of the header replacement.
        #expect(Self.runs < 20 || (changed > 0 && changed < Self.runs))
    }
}

import Foundation
import Testing

/// The crash harness for `vault forget` (CrashTests' style): before each
/// run every item gets new versions, then `forget --keep-last 2` is
/// SIGKILLed at a random moment spread over its real duration. After every
/// kill:
///
/// - the vault opens and `check --read-data` exits 0: never a manifest that
///   names a missing version (orphaned blobs are only warnings);
/// - each item lists either every version it had or exactly the two newest
///   (the manifest switches at once), and every listed version has the
///   content it was added with.
///
/// `VAULT_CRASH_RUNS` sets the number of kills (default here 12, as forget
/// is quick and each verification reads every version); `make crashtest`
/// runs 500.
@Suite struct ForgetCrashTests {
    static let runs: Int = {
        let value = ProcessInfo.processInfo.environment["VAULT_CRASH_RUNS"].flatMap { Int($0) }
        return max(value ?? 12, 1)
    }()
    static let items = ["a.bin", "b.bin"]

    /// What each item holds: version number -> SHA-256, in version order.
    typealias History = [String: [(version: Int, hash: String)]]

    func listedVersions(_ v: VaultFixture, _ name: String) throws -> [Int] {
        let r = try v.run(["list", "--versions", name, "--json"])
        #expect(r.status == 0, "list --versions \(name): \(r.stderr)")
        let items = try JSONObject.parse(r.stdout)["items"] as? [[String: Any]] ?? []
        return items.compactMap { $0["version"] as? Int }
    }

    /// Two new versions of every item (200–600 KB each, so the blobs are
    /// worth deleting); `history` learns their numbers.
    func addVersions(_ v: VaultFixture, _ history: inout History) throws {
        for name in Self.items {
            for _ in 0..<2 {
                let content = randomBytes(Int.random(in: 200_000...600_000))
                let source = try v.write(name, content)
                let r = try v.add(["add", source])
                #expect(r.status == 0, "add: \(r.stderr)")
                let next = (history[name]?.last?.version ?? 0) + 1
                history[name, default: []].append((next, sha256(content)))
            }
        }
    }

    func forget(_ v: VaultFixture, killAfter delay: Double) throws -> CLIHarness.Result {
        try runKilled(after: delay, ["--vault", v.dir, "--password-file", v.passwordFile, "forget", "--keep-last", "2"],
                      environment: v.environment())
    }

    @Test func killedForget() throws {
        let v = try VaultFixture()
        var history: History = [:]
        // Absorb first, so the forget being timed and killed does only its own work.
        func prepare() throws {
            try addVersions(v, &history)
            #expect(try v.run(["list"]).status == 0)
        }
        var duration = 0.0, killed = 0, switched = 0
        for run in 0..<Self.runs {
            if run % 10 == 0 {
                var times: [Double] = []
                for _ in 0..<3 {
                    try prepare()
                    var r: CLIHarness.Result!
                    times.append(try measure { r = try forget(v, killAfter: 600) })
                    #expect(r.status == 0, "uninterrupted forget: \(r.stderr)")
                    for name in Self.items { history[name] = Array(history[name]!.suffix(2)) }
                }
                duration = times.sorted()[1]
            }
            try prepare()
            // Up to 1.5x the measured time: on a loaded machine a forget can take
            // longer than it did when measured, and some runs must get past the
            // switch for the test to show both sides (`switched` below).
            let r = try forget(v, killAfter: Double.random(in: 0..<(duration * 1.5)))
            if r.status != 0 {
                #expect(r.status == 137, "run \(run): forget exited \(r.status): \(r.stderr)")
                killed += 1
            }

            let check = try v.run(["check", "--read-data"])
            #expect(check.status == 0, "run \(run): check --read-data: \(check.stderr)")
            for line in check.stderr.split(separator: "\n") {
                let allowed = line.hasPrefix("vault: no problems found") || line.hasPrefix("vault: warning: orphan")
                    || line.hasPrefix("vault: warning: leftover") || line.hasPrefix("hint: ")
                #expect(allowed, "run \(run): check said \(line)")
            }
            for name in Self.items {
                let before = history[name]!
                let listed = try listedVersions(v, name)
                let all = before.map(\.version), kept = Array(all.suffix(2))
                #expect(listed == all || listed == kept, "run \(run): \(name) lists \(listed), had \(all)")
                if listed == kept && all != kept { switched += 1 }
                for (version, hash) in before where listed.contains(version) {
                    let got = try v.run(["get", name, "--version", String(version)])
                    #expect(got.status == 0 && sha256(got.stdout) == hash, "run \(run): \(name) version \(version)")
                }
                history[name] = before.filter { listed.contains($0.version) }
            }
            // Blobs a kill orphaned are set aside and deleted, so the next check starts clean.
            #expect(try v.run(["check", "--repair", "--purge"]).status == 0)
        }
        // Worth something only if some kills landed before the switch and some after.
        #expect(killed > 0)
        #expect(Self.runs < 10 || switched > 0)
    }
}

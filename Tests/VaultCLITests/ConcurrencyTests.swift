import Foundation
import Synchronization
import Testing

/// Several `vault add` processes at once while `vault list` keeps unlocking
/// and absorbing: nothing lost, nothing duplicated, every content intact.
@Suite struct ConcurrencyTests {
    @Test func concurrentAddsWhileListAbsorbs() throws {
        let v = try VaultFixture()
        // Each of 6 workers runs 5 one-file adds, then one add of 5 files:
        // 36 processes, 60 files, up to 6 adds at once.
        let processes = 6, filesPerProcess = 5
        // name -> (size, SHA-256); the source files stay until the end.
        var expected: [String: (size: Int, hash: String)] = [:]
        var work: [[[String]]] = []  // per worker: the path lists of its `vault add` invocations
        for p in 0..<processes {
            var invocations: [[String]] = []
            for round in 0..<2 {
                var paths: [String] = []
                for f in 0..<filesPerProcess {
                    let content = randomBytes(Int.random(in: 0...400_000))
                    let name = "p\(p)-r\(round)-f\(f).bin"
                    paths.append(try v.write(name, content))
                    expected[name] = (content.count, sha256(content))
                }
                if round == 0 { invocations += paths.map { [$0] } } else { invocations.append(paths) }
            }
            work.append(invocations)
        }

        let vaultDir = v.dir, passwordFile = v.passwordFile, env = v.environment()
        let addResults = Collector<(invocation: Int, result: CLIHarness.Result)>()
        let listResults = Collector<CLIHarness.Result>()
        let addersLeft = Atomic<Int>(processes)
        var blocks: [@Sendable () -> Void] = []
        for (p, invocations) in work.enumerated() {
            blocks.append {
                for (i, paths) in invocations.enumerated() {
                    do {
                        let r = try CLIHarness.run(["--vault", vaultDir, "add"] + paths, environment: env)
                        addResults.append((p * 100 + i, r))
                    } catch {
                        addResults.append((p * 100 + i, CLIHarness.Result(status: -1, stdout: [], stderr: "\(error)")))
                    }
                }
                addersLeft.subtract(1, ordering: .sequentiallyConsistent)
            }
        }
        blocks.append {
            // list as often as it can until every adder is done, then once more.
            var last = false
            while !last {
                last = addersLeft.load(ordering: .sequentiallyConsistent) == 0
                do {
                    listResults.append(try CLIHarness.run(["--vault", vaultDir, "--password-file", passwordFile,
                                                           "list", "--json"], environment: env))
                } catch {
                    listResults.append(CLIHarness.Result(status: -1, stdout: [], stderr: "\(error)"))
                }
            }
        }
        runConcurrently(blocks)

        #expect(addResults.all.count == work.map(\.count).reduce(0, +))
        for (invocation, r) in addResults.all {
            #expect(r.status == 0, "add \(invocation): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("vault: added '") }, "add \(invocation): \(r.stderr)")
        }
        #expect(listResults.all.count >= 2)
        for r in listResults.all {
            #expect(r.status == 0, "list during the adds: \(r.stderr)")
            // A listing may lack waiting items, but never shows one twice or one never added.
            let names = (try? ListedItem.parse(r.stdout).map(\.name)) ?? []
            #expect(Set(names).count == names.count)
            #expect(Set(names).isSubset(of: expected.keys), "listed: \(Set(names).subtracting(expected.keys))")
            let allowed = r.stderr.isEmpty
                || r.stderr == "vault: warning: another vault process is writing: waiting drop-ins are not listed yet\n"
            #expect(allowed, "list said: \(r.stderr)")
        }

        // At the end: every file listed exactly once, with its size and content.
        let items = try v.listed()
        #expect(items.count == expected.count)
        #expect(Set(items.map(\.name)) == Set(expected.keys), "missing: \(Set(expected.keys).subtracting(items.map(\.name)))")
        for item in items { #expect(UInt64(expected[item.name]?.size ?? -1) == item.size, "\(item.name)") }
        #expect(try v.info()["waiting_drop_ins"] as? Int == 0)
        let out = v.path + "/restored"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let restored = try v.run(["restore"] + items.map(\.name) + ["--to", out])
        #expect(restored.status == 0, "\(restored.stderr)")
        for item in items {
            #expect((try? sha256(file: out + "/" + item.name)) == expected[item.name]?.hash, "content of \(item.name)")
        }
        let check = try v.run(["check", "--read-data"])
        #expect(check.status == 0)
        let total = sizeText(expected.values.map(\.size).reduce(0, +))
        #expect(check.stderr.hasPrefix("vault: no problems found (\(expected.count) items of \(total), ")
                && check.stderr.hasSuffix(" on disk, \(total) read)\n"), "\(check.stderr)")
    }

    /// Adds of the same name at once: all kept, as versions of one item, no loss.
    @Test func concurrentAddsOfTheSameName() throws {
        let v = try VaultFixture()
        let count = 6
        var hashes: [String] = []
        var paths: [String] = []
        for i in 0..<count {
            let content = randomBytes(50_000 + i)
            hashes.append(sha256(content))
            paths.append(try v.write("source-\(i)", content))
        }
        let vaultDir = v.dir, env = v.environment()
        let results = Collector<CLIHarness.Result>()
        runConcurrently(paths.map { path in {
            if let r = try? CLIHarness.run(["--vault", vaultDir, "add", path, "--name", "same.txt"], environment: env) {
                results.append(r)
            }
        } })
        #expect(results.all.map(\.status) == Array(repeating: 0, count: count))
        let items = try v.listed()
        #expect(items.map(\.name) == ["same.txt"])
        var got: [String] = []
        for n in 1...count { got.append(sha256(try v.run(["get", "same.txt", "--version", String(n)]).stdout)) }
        #expect(got.sorted() == hashes.sorted())
    }

    static let strace = "/usr/bin/strace"

    /// A drop-in's temp file must never be visible unlocked: a writer's
    /// leftover cleanup (inside any `vault list`) would take it for a
    /// leftover and delete it, and the add would fail. (It once was: created,
    /// then flock'ed, a microseconds-wide window, about 1 add in 1,000 under
    /// a tight add/list loop.) strace widens any such window deterministically
    /// by delaying the add's first flock(2) by a second, during which
    /// `vault list` runs; now the file is created nameless (O_TMPFILE) and
    /// only linked into the inbox after the flock, so nothing is there to take.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: strace), "needs strace"))
    func aDropInBeingWrittenIsNotTakenForALeftover() throws {
        let v = try VaultFixture()
        let content = randomBytes(10_000)
        let source = try v.write("in-flight.bin", content)
        let env = v.environment(), vaultDir = v.dir
        let added = Collector<CLIHarness.Result>()
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            if let r = try? CLIHarness.run(["-f", "-qq", "-o", "/dev/null", "-e", "trace=flock",
                                            "-e", "inject=flock:delay_enter=1000000:when=1",
                                            CLIHarness.binary, "--vault", vaultDir, "add", source],
                                           environment: env, timeout: 30, executable: Self.strace) {
                added.append(r)
            }
            group.leave()
        }
        defer { group.wait() }
        // Let the add reach its delayed flock, then run a writer's cleanup.
        usleep(400_000)
        func tempFiles() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: vaultDir + "/inbox")) ?? []).filter { $0.hasPrefix(".tmp-") }
        }
        #expect(tempFiles().isEmpty, "an unlocked temp file is visible in the inbox")
        let list = try v.run(["list"])
        #expect(list.status == 0)
        group.wait()
        let r = try #require(added.all.first)
        #expect(r.status == 0, "the add failed: \(r.stderr)")
        #expect(try v.listed().map(\.name) == ["in-flight.bin"])
    }

    /// What `vault check` prints for a byte count (Format.size).
    private func sizeText(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        var value = Double(bytes) / 1024, unit = "KiB"
        if value >= 1024 { value /= 1024; unit = "MiB" }
        return String(format: value < 10 ? "%.1f %@" : "%.0f %@", value, unit)
    }
}

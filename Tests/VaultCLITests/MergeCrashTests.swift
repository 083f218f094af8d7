import Foundation
import Testing

/// SIGKILL (of vault and its rclone children, as a power cut would) while
/// a push merges, or a pull merges, at random moments; then a rerun. After
/// every rerun: the rerun succeeds, the killed machine holds every item
/// either machine added and nothing twice, every byte authenticates here
/// and on the remote. `VAULT_MERGE_KILLS` (default 6) sets the rounds.
@Suite struct MergeCrashTests {
    static let rounds = max(6, Int(ProcessInfo.processInfo.environment["VAULT_MERGE_KILLS"] ?? "") ?? 6)

    @Test func killedMergesLeaveBothSidesWholeAndARerunCompletes() throws {
        let (m, remote) = try MultiMachineTests.machines(2)
        let (a, b) = (m[0], m[1])
        var expected: Set<String> = ["seed"]
        var duration = 1.5, killed = 0
        for round in 0..<Self.rounds {
            // Both change: A pushes, so B's next push or pull merges.
            let fromA = "a\(round)", fromB = "b\(round)"
            #expect(try a.addFile(fromA, String(repeating: "a", count: 100_000)).status == 0)
            #expect(try a.run(["list"]).status == 0)
            #expect(try a.run(["push"]).status == 0)
            // B's drop-in waits: the killed command sends it, or takes it in, first.
            #expect(try b.addFile(fromB, String(repeating: "b", count: 100_000)).status == 0)
            expected.formUnion([fromA, fromB])

            let command = round % 2 == 0 ? "push" : "pull"
            let delay = Double.random(in: 0..<duration)
            var r = CLIHarness.Result(status: 0, stdout: [], stderr: "")
            let took = try measure {
                r = try runGroupKilled(after: delay, ["--vault", b.v.dir, "--password-file", b.v.passwordFile, command],
                                       environment: b.v.environment())
            }
            if r.status == 137 { killed += 1 } else {
                #expect(r.status == 0, "\(command) exited \(r.status): \(r.stderr)")
                duration = max(0.3, took)
            }
            // What a kill left opens, and the remote is whole.
            #expect(try b.run(["list"]).status == 0, "after a kill at \(delay) s")
            let remoteCheck = try b.run(["check", "--remote", "origin"])
            #expect(remoteCheck.status == 0, "after a kill of \(command) at \(delay) s: \(remoteCheck.stderr)")
            // The rerun completes, and B has everything, once.
            let rerun = try b.run(["push"])
            #expect(rerun.status == 0, "rerun after a kill of \(command) at \(delay) s: \(rerun.stderr)")
            let listed = try b.items()
            #expect(Set(listed.map(\.name)) == expected, "\(listed)")
            #expect(listed.allSatisfy { $0.versions == 1 }, "\(listed)")
        }
        #expect(try a.run(["pull"]).status == 0)
        #expect(try a.items() == b.items())
        #expect(killed >= Self.rounds / 3, "only \(killed) of \(Self.rounds) merges were killed")
        for x in [a, b] { #expect(try x.run(["check", "--read-data"]).status == 0) }
        #expect(try a.run(["check", "--remote", "origin", "--read-data"]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: remote).filter { $0.hasPrefix(".push-") }.isEmpty)
    }
}

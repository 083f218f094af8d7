import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The crash harness for `vault move`: the sender or the receiver is
/// SIGKILLed at a random moment spread over a real move's duration, and
/// after every kill at least one complete vault exists:
///
/// - the source, if it still has its header, opens and checks with every item;
/// - the target, if it exists, opens and checks with every item (never a half vault);
/// - one of the two exists.
///
/// Runs `VAULT_CRASH_RUNS / 5` kills (at least 6); `make crashtest` runs more.
@Suite("Move crash harness", .serialized)
struct MoveCrashTests {
    static let runs = max(CrashTests.runs / 5, 6)
    static let big: [UInt8] = {
        var g = SystemRandomNumberGenerator()
        return (0..<(3 << 20)).flatMap { _ in withUnsafeBytes(of: g.next() as UInt64, Array.init) }
    }()

    static func expectComplete(_ dir: String, _ v: VaultFixture, what: String, run: Int) throws {
        let list = try CLIHarness.run(["--vault", dir, "--password-file", v.passwordFile, "list", "--json"],
                                      environment: v.environment(), cwd: v.path)
        #expect(list.status == 0, "run \(run): \(what) does not open: \(list.stderr)")
        if list.status == 0 {
            #expect(try ListedItem.parse(list.stdout).map(\.name).sorted() == ["big.bin", "drop", "small.txt"],
                    "run \(run): \(what) is missing items")
        }
        let check = try CLIHarness.run(["--vault", dir, "--password-file", v.passwordFile, "check", "--read-data"],
                                       environment: v.environment(), cwd: v.path)
        #expect(check.status == 0, "run \(run): \(what) fails its check: \(check.stderr)")
    }

    /// One move; with `killAfter`, SIGKILL the chosen side that many seconds
    /// after the sender started. Returns the uninterrupted duration.
    @discardableResult
    static func move(killAfter: Double?, killReceiver: Bool, run: Int, outcomes: inout [String: Int]) throws -> Double {
        let v = try VaultFixture()
        try v.write("small.txt", Array("small\n".utf8))
        try v.write("big.bin", Self.big)
        for name in ["small.txt", "big.bin"] { #expect(try v.add(["add", v.path + "/" + name]).status == 0) }
        #expect(try v.run(["list"]).status == 0)
        #expect(try v.add(["add", "-", "--name", "drop"], stdin: Array("waiting".utf8)).status == 0)
        let target = v.path + "/moved"
        let (receiver, _, codeFile) = try MoveCommandTests.receiver(v, into: target, ["--no-verify"])
        defer { receiver.killGroup() }
        let started = Date()
        let sender = try Background(["--vault", v.dir, "--password-file", v.passwordFile, "move", "send",
                                     "--code-file", codeFile], environment: v.environment(), cwd: v.path)
        defer { sender.killGroup() }
        if let killAfter {
            usleep(UInt32(killAfter * 1e6))
            (killReceiver ? receiver : sender).killGroup()
        }
        // A receiver whose sender died before connecting waits for another
        // one: that is its job, so it is stopped here after a while.
        let senderStatus = sender.wait(timeout: 60)
        let receiverStatus = receiver.wait(timeout: killAfter == nil ? 60 : 2)
        let elapsed = Date().timeIntervalSince(started)
        if killAfter == nil {
            #expect(senderStatus == 0 && receiverStatus == 0, "\(sender.stderr)\n\(receiver.stderr)")
        }
        let sourceThere = FileManager.default.fileExists(atPath: v.dir + "/vault.header")
        let targetThere = FileManager.default.fileExists(atPath: target)
        #expect(sourceThere || targetThere, "run \(run): neither vault exists")
        outcomes[sourceThere ? (targetThere ? "both" : "source only") : "target only", default: 0] += 1
        if sourceThere { try expectComplete(v.dir, v, what: "the source", run: run) }
        if targetThere { try expectComplete(target, v, what: "the target", run: run) }
        return elapsed
    }

    @Test func killedSenderOrReceiver() throws {
        // Spread the kills over a little more than a real move takes.
        var outcomes: [String: Int] = [:]
        let span = try Self.move(killAfter: nil, killReceiver: false, run: 0, outcomes: &outcomes) * 1.2
        outcomes = [:]
        for run in 1...Self.runs {
            try Self.move(killAfter: Double.random(in: 0...span), killReceiver: run % 2 == 0, run: run, outcomes: &outcomes)
        }
        // Where the kills landed, for whoever reads the log.
        print("move crash harness: \(Self.runs) kills over \(String(format: "%.2f", span)) s: \(outcomes.sorted { $0.key < $1.key })")
    }
}

import Foundation
import Testing
import VaultCrypto

/// SIGKILL of `vault push` (and its rclone children, as a power cut would)
/// at random moments. After every kill the remote must be a vault whose
/// manifest is the one before the push or the one being pushed, with every
/// item that manifest names present at its size (`check --remote`; every
/// tenth round also every chunk with --read-data); a rerun must complete.
/// The target is rclone's local backend, where uploads are not atomic, so
/// this exercises the push order itself. `VAULT_CRASH_RUNS` (default 30)
/// sets the number of kills.
@Suite struct RemoteCrashTests {
    static let kills: Int = {
        max(30, ProcessInfo.processInfo.environment["VAULT_CRASH_RUNS"].flatMap { Int($0) } ?? 30)
    }()

    static func generation(_ manifest: String) throws -> UInt64 {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: manifest)))
        guard b.count >= 20 else { throw Failure("short manifest") }
        return b[12..<20].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// The blobs in a vault's or a remote's items/, with their sizes.
    static func blobs(_ dir: String) throws -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir + "/items") where !name.hasPrefix(".") {
            let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/items/" + name)
            out[name] = (attributes[.size] as? NSNumber)?.uint64Value ?? 0
        }
        return out
    }

    @Test func killedPushLeavesTheOldOrTheNewStateAndARerunCompletes() throws {
        let v = try VaultFixture()
        let remote = v.path + "/remote"
        #expect(try v.run(["remote", "add", "usb", remote]).status == 0)
        var serial = 0
        func addItem() throws {
            serial += 1
            let f = try v.write("item-\(serial).bin", randomBytes(200_000 + Int.random(in: 0..<200_000)))
            #expect(try v.add(["add", f]).status == 0)
            try FileManager.default.removeItem(atPath: f)
        }
        // The blobs each manifest generation names (no orphans here, so
        // exactly the blobs in items/ while it was current).
        var named: [UInt64: [String: UInt64]] = [:]
        for _ in 0..<3 { try addItem() }
        #expect(try v.run(["list"]).status == 0)
        named[try Self.generation(v.dir + "/manifest")] = try Self.blobs(v.dir)
        let first = try v.run(["push"])
        #expect(first.status == 0, "\(first.stderr)")

        var killed = 0, rounds = 0
        var duration = 1.0
        while killed < Self.kills && rounds < Self.kills * 3 {
            rounds += 1
            // A change to push: one item in (the remove absorbs it), the oldest out.
            try addItem()
            #expect(try v.run(["remove", "item-\(serial - 3).bin"]).status == 0)
            let old = try Self.generation(remote + "/manifest")
            let new = try Self.generation(v.dir + "/manifest")
            named[new] = try Self.blobs(v.dir)

            // Half the kills anywhere, half in the last 40% of a push, where
            // the manifest lands and deletions start.
            let delay = rounds % 2 == 0 ? Double.random(in: 0..<duration) : Double.random(in: (duration * 0.6)..<duration)
            var r = CLIHarness.Result(status: 0, stdout: [], stderr: "")
            let took = try measure { r = try runGroupKilled(after: delay, ["--vault", v.dir, "push"], environment: v.environment()) }
            if r.status == 0 {
                duration = max(0.2, took)  // calibrates the window from pushes that finished
                #expect(try Self.generation(remote + "/manifest") == new)
                continue
            }
            #expect(r.status == 137, "push exited \(r.status): \(r.stderr)")
            killed += 1
            // The remote's manifest is the old or the new one, and every
            // blob it names is there, whole.
            let now = try Self.generation(remote + "/manifest")
            #expect(now == old || now == new, "remote generation \(now), expected \(old) or \(new)")
            let there = try Self.blobs(remote)
            for (blob, size) in named[now] ?? [:] {
                #expect(there[blob] == size, "generation \(now) names \(blob) (\(size) bytes); the remote has \(there[blob] ?? 0)")
            }
            // Every fifth kill: the vault's own check of the remote, and a
            // rerun that must finish (the next round's push is a rerun too).
            if killed % 5 == 0 {
                let check = try v.run(["check", "--remote", "usb"] + (killed % 10 == 0 ? ["--read-data"] : []))
                #expect(check.status == 0, "after a kill at \(delay) s: \(check.stderr)")
                let rerun = try v.run(["push"])
                #expect(rerun.status == 0, "rerun: \(rerun.stderr)")
                #expect(try Self.generation(remote + "/manifest") == new)
            }
        }
        #expect(killed >= Self.kills, "only \(killed) kills in \(rounds) rounds")
        #expect(try v.run(["push"]).status == 0)
        let final = try v.run(["check", "--remote", "usb", "--read-data"])
        #expect(final.status == 0, "\(final.stderr)")
        // Nothing the vault no longer has is left there, and no temporaries.
        #expect(try Self.blobs(remote) == Self.blobs(v.dir))
        #expect(try FileManager.default.contentsOfDirectory(atPath: remote).filter { $0.hasPrefix(".push-") }.isEmpty)
        // The killed pushes' scratch directories were erased by the next run.
        let state = v.path + "/.local/state/vault"
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasPrefix("rclone-") }.isEmpty)
    }
}

import Foundation
import Testing

/// The wrong-password delay: two free wrong guesses, then 5 s, 30 s, 2 min,
/// 10 min, 30 min; exit 13 at once (no Argon2) during the wait; the state
/// is the file `<vault>/attempts` (so it survives a kill), cleared by the
/// right password. The "fast clock" is rewriting the file's timestamp into
/// the past, which is what the passing of time looks like to the CLI.
@Suite struct AttemptDelayTests {
    let v: VaultFixture
    let wrong: String
    var attempts: String { v.dir + "/attempts" }

    /// A vault with Argon2id at 64 MiB, 3 passes: the lowest setting allowed
    /// without VAULT_ALLOW_WEAK_KDF, slow enough to tell a real unlock from
    /// an immediate refusal.
    init() throws {
        v = try VaultFixture(create: false)
        let r = try CLIHarness.run(["--vault", v.dir, "--password-file", v.passwordFile, "init",
                                    // Costly enough (~0.5 s here) that a refusal without
                                    // Argon2 is told apart from one with it by a wide
                                    // margin, even when process start-up is slow under load.
                                    "--kdf-memory", "256", "--kdf-passes", "3"],
                                   environment: v.sandbox.environment(), cwd: v.path)
        guard r.status == 0 else { throw Failure("init failed (\(r.status)): \(r.stderr)") }
        wrong = try v.sandbox.file("wrong", "not the password\n")
    }

    func unlock(_ password: String) throws -> (CLIHarness.Result, seconds: Double) {
        var r: CLIHarness.Result!
        let t = try measure { r = try v.run(["list"], password: password) }
        return (r, t)
    }

    struct State: Equatable {
        var failures: UInt32
        var notBefore: Int64
    }

    /// Parses `attempts`, checking its fixed layout byte by byte.
    func state(sourceLocation: SourceLocation = #_sourceLocation) throws -> State {
        let b = Array(try Data(contentsOf: URL(fileURLWithPath: attempts)))
        #expect(b.count == 24, sourceLocation: sourceLocation)
        #expect(Array(b.prefix(12)) == Array("VAULTATT".utf8) + [1, 0, 0, 0], "\(b)", sourceLocation: sourceLocation)
        guard b.count == 24 else { throw Failure("attempts is \(b.count) bytes") }
        let failures = b[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let notBefore = Int64(bitPattern: b[16..<24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        return State(failures: failures, notBefore: notBefore)
    }

    /// The fast clock: the wait is over (the timestamp moves `seconds` back).
    func timePasses(_ seconds: Int64 = 3600) throws {
        var b = Array(try Data(contentsOf: URL(fileURLWithPath: attempts)))
        let s = try state()
        b.replaceSubrange(16..<24, with: withUnsafeBytes(of: (s.notBefore - seconds).bigEndian, Array.init))
        try Data(b).write(to: URL(fileURLWithPath: attempts))
    }

    var now: Int64 { Int64(Date().timeIntervalSince1970) }

    @Test func theDelayGrowsRefusesAtOnceAndIsClearedByTheRightPassword() throws {
        // Two wrong passwords: exit 12, no wait.
        var argon2 = Double.infinity
        for n in 1...2 {
            let (r, t) = try unlock(wrong)
            argon2 = min(argon2, t)
            #expect(r.status == 12)
            #expect(r.stderr == "vault: wrong password\n")
            let s = try state()
            #expect(s.failures == UInt32(n))
            #expect(s.notBefore <= now, "no wait after \(n) wrong passwords")
        }
        // The third: exit 12, and the message names the 5 s wait.
        let before = now
        let (third, _) = try unlock(wrong)
        #expect(third.status == 12)
        #expect(firstLine(third.stderr).hasPrefix("vault: wrong password; the next attempt is possible in 5 s (at "), "\(third.stderr)")
        var s = try state()
        #expect(s.failures == 3)
        #expect(s.notBefore >= before + 5 && s.notBefore <= now + 5, "\(s) at \(before)")

        // During the wait even the right password is refused, at once.
        let (locked, lockedTime) = try unlock(v.passwordFile)
        #expect(locked.status == 13)
        #expect(firstLine(locked.stderr).hasPrefix("vault: too many wrong passwords; try again in "), "\(locked.stderr)")
        #expect(lockedTime < 0.5, "refusing took \(lockedTime) s")
        #expect(lockedTime < argon2 / 2, "refusing took \(lockedTime) s; a wrong password (Argon2) \(argon2) s")
        #expect(try state() == s, "a refused attempt changes nothing")
        // A wrong password during the wait is refused the same way, and not counted.
        let (lockedWrong, _) = try unlock(wrong)
        #expect(lockedWrong.status == 13)
        #expect(try state() == s)

        // The clock moves on: the right password opens, and the state is reset.
        try timePasses()
        let (right, _) = try unlock(v.passwordFile)
        #expect(right.status == 0, "\(right.stderr)")
        s = try state()
        #expect(s.failures == 0)
        #expect(s.notBefore <= now)
        // And the count starts again from zero: two free wrong guesses.
        #expect(try unlock(wrong).0.status == 12)
        #expect(try state().notBefore <= now)
    }

    /// 5 s, 30 s, 2 min, 10 min, then 30 min for good.
    @Test func theScheduleAndTheCap() throws {
        for _ in 1...2 { #expect(try unlock(wrong).0.status == 12) }
        for (n, wait, text) in [(3, 5, "5 s"), (4, 30, "30 s"), (5, 120, "2 min"), (6, 600, "10 min"),
                                (7, 1800, "30 min"), (8, 1800, "30 min")] {
            let before = now
            let (r, _) = try unlock(wrong)
            #expect(r.status == 12)
            #expect(firstLine(r.stderr).hasPrefix("vault: wrong password; the next attempt is possible in \(text) (at "), "n = \(n)")
            // The time to retry, as a clock time: HH:MM:SS.
            #expect(firstLine(r.stderr).wholeMatch(of: /.* \(at \d\d:\d\d:\d\d\)/) != nil, "\(r.stderr)")
            let s = try state()
            #expect(s.failures == UInt32(n))
            #expect(s.notBefore >= before + Int64(wait) && s.notBefore <= now + Int64(wait), "n = \(n): \(s)")
            // Locked out until the time has passed.
            let locked = try v.run(["list"], password: wrong)
            #expect(locked.status == 13)
            try timePasses(Int64(wait))
        }
    }

    /// The state is a file written before vault reports: a kill right after
    /// cannot lose it, and a new process (another shell, after a reboot) sees
    /// it. Other commands that need the password are refused alike.
    @Test func theStateIsAFileThatEveryUnlockHonours() throws {
        for _ in 1...3 { _ = try unlock(wrong) }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: attempts)))
        #expect(bytes.count == 24)
        #expect(Array(bytes[0..<16]) == Array("VAULTATT".utf8) + [1, 0, 0, 0] + [0, 0, 0, 3])
        let mode = try FileManager.default.attributesOfItem(atPath: attempts)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        for command in [["get", "x"], ["check"], ["rekey", "--yes"], ["passwd", "--new-password-file", v.passwordFile]] {
            let r = try v.run(command)
            #expect(r.status == 13, "\(command): \(r.stderr)")
        }
        // Commands without the password still work.
        #expect(try v.add(["info"]).status == 0)
        try v.write("dropped", [1])
        #expect(try v.add(["add", "dropped"]).status == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: attempts))) == bytes)
    }

    /// FORMAT.md: `attempts` is "absent until a wrong password".
    @Test func noAttemptsFileBeforeAWrongPassword() throws {
        #expect(try unlock(v.passwordFile).0.status == 0)
        #expect(!FileManager.default.fileExists(atPath: attempts), "a right password created the attempts file")
    }

    /// A damaged state file counts as n = 7 (FORMAT.md): no lockout by
    /// itself, but the next wrong password waits the full 30 min.
    @Test func aDamagedStateFileCountsAsTheCap() throws {
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: attempts))
        let (r, _) = try unlock(wrong)
        #expect(r.status == 12)
        #expect(firstLine(r.stderr).hasPrefix("vault: wrong password; the next attempt is possible in 30 min (at "))
        #expect(try state().failures == 8)
        try timePasses(1800)
        #expect(try unlock(v.passwordFile).0.status == 0)
        #expect(try state().failures == 0)
    }
    /// On a terminal, a pending wait is said before any prompt and held
    /// until it is over (issue 29, item 8): no "password:" during the wait,
    /// a password typed ahead neither shows nor counts, and the prompt that
    /// follows opens with the right one.
    @Test func aTerminalSaysTheWaitAndPromptsOnlyAfterIt() throws {
        for _ in 1...3 { _ = try unlock(wrong) }
        // The fast clock, the other way: two seconds of the wait are left.
        var b = Array(try Data(contentsOf: URL(fileURLWithPath: attempts)))
        b.replaceSubrange(16..<24, with: withUnsafeBytes(of: (now + 2).bigEndian, Array.init))
        try Data(b).write(to: URL(fileURLWithPath: attempts))
        let locked = try state()

        let r = try PTYDriver.run(["--vault", v.dir, "list"],
                                  steps: [.expect("waiting"), .send("typed-ahead\n"),
                                          .expect("password: "), .send(v.password + "\n")],
                                  environment: v.sandbox.environment(), timeout: 60)
        #expect(r.failed_step == nil, "\(r.text)")
        #expect(r.exit == 0, "\(r.text)")
        let text = r.text
        #expect(text.hasPrefix("vault: too many wrong passwords: the next attempt is possible in "), "\(text)")
        guard let said = text.range(of: "waiting"), let prompt = text.range(of: "password: ") else { return }
        #expect(said.lowerBound < prompt.lowerBound, "the prompt came before the wait was said")
        #expect(text.components(separatedBy: "password: ").count == 2, "one prompt: \(text)")
        #expect(!r.transcript.contains("typed-ahead"), "typed during the wait and echoed")
        #expect(!text.contains("wrong password;") && !text.contains("wrong password\n"), "the typed-ahead line was tried: \(text)")
        #expect(r.echo_after)
        // The right password cleared the count; the typed-ahead one was never counted.
        #expect(locked.failures == 3)
        #expect(try state().failures == 0)
    }
}

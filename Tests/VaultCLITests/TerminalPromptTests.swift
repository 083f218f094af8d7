import Foundation
import Testing

/// The password prompt on a real (pseudo-)terminal: echo is off while the
/// user types, the typed password never appears on screen, the terminal is
/// left as it was, and Ctrl-C at the prompt restores echo and dies by SIGINT.
@Suite struct TerminalPromptTests {
    let sandbox: Sandbox
    init() throws { sandbox = try Sandbox() }

    static let password = "correct horse battery staple"

    /// Guards the instrument: with a program that does echo, the driver sees
    /// the typed text and reports echo on, so a pass below means something.
    @Test func driverSeesEchoWhenThereIsEcho() throws {
        let r = try PTYDriver.run(["-c", "printf 'name: '; read answer; echo \"hello $answer\""],
                                  steps: [.expect("name: "), .send("visible-text\n"), .expect("hello visible-text")],
                                  environment: sandbox.environment(), executable: "/bin/sh")
        #expect(r.failed_step == nil)
        #expect(r.echo_at_expect == [true, true])
        #expect(r.text == "name: visible-text\nhello visible-text\n")
        #expect(r.exit == 0)
    }

    @Test func newPasswordIsAskedTwiceWithoutEcho() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init", "--kdf-memory", "8", "--kdf-passes", "1"],
                                  steps: [.expect("new password: "), .send(Self.password + "\n"),
                                          .expect("repeat new password: "), .send(Self.password + "\n")],
                                  environment: sandbox.environment(["VAULT_ALLOW_WEAK_KDF": "1"]))
        #expect(r.failed_step == nil)
        #expect(r.timed_out == false)
        #expect(r.echo_at_expect == [false, false])
        #expect(r.echo_after)
        #expect(!r.transcript.contains(Self.password))
        #expect(!r.transcript.contains("correct"))
        // Each prompt is followed by the newline the user's Enter did not echo.
        #expect(r.text.hasPrefix("new password: \nrepeat new password: \n"))
        // The exit status is for the wired `init` to pin down (a new vault).
    }

    /// A pair that does not match, or a password too short for the rule,
    /// is said and asked for again (issue 29, item 10), three rounds at most.
    @Test func mismatchedOrShortNewPasswordsAreAskedAgain() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init", "--kdf-memory", "8", "--kdf-passes", "1"],
                                  steps: [.expect("new password: "), .send("first password\n"),
                                          .expect("repeat new password: "), .send("second password\n"),
                                          .expect("new password: "), .send("short\n"),
                                          .expect("new password: "), .send(Self.password + "\n"),
                                          .expect("repeat new password: "), .send(Self.password + "\n")],
                                  environment: sandbox.environment(["VAULT_ALLOW_WEAK_KDF": "1"]))
        #expect(r.failed_step == nil, "\(r.text)")
        #expect(r.exit == 0, "\(r.text)")
        #expect(r.text.hasPrefix("new password: \nrepeat new password: \nvault: the passwords do not match; try again\n"
                                 + "new password: \nvault: the password must have at least 8 characters; try again\n"), "\(r.text)")
        #expect(r.echo_after)
        let three = try PTYDriver.run(["--vault", sandbox.path + "/w", "init"],
                                      steps: [.expect("new password: "), .send("short\n"), .expect("new password: "), .send("short\n"),
                                              .expect("new password: "), .send("short\n")],
                                      environment: sandbox.environment())
        #expect(three.exit == 1, "\(three.text)")
        #expect(three.text.hasSuffix("vault: the password must have at least 8 characters\n"
                                     + "hint: a few unrelated words make a long password that is easy to type\n"), "\(three.text)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/w/vault.header"))
    }

    /// passwd asks for the current password by that name before the new one.
    @Test func passwdSaysCurrentPassword() throws {
        let dir = sandbox.path + "/v"
        let pw = try sandbox.file("pw", Self.password + "\n")
        #expect(try CLIHarness.run(["--vault", dir, "--password-file", pw, "init", "--kdf-memory", "8", "--kdf-passes", "1"],
                                   environment: sandbox.environment(["VAULT_ALLOW_WEAK_KDF": "1"]), cwd: sandbox.path).status == 0)
        let next = "another long password"
        let r = try PTYDriver.run(["--vault", dir, "passwd"],
                                  steps: [.expect("current password: "), .send(Self.password + "\n"),
                                          .expect("new password: "), .send(next + "\n"),
                                          .expect("repeat new password: "), .send(next + "\n")],
                                  environment: sandbox.environment(["VAULT_ALLOW_WEAK_KDF": "1"]))
        #expect(r.failed_step == nil && r.exit == 0, "\(r.text)")
        #expect(r.text.hasPrefix("current password: \n"), "\(r.text)")
    }

    @Test func emptyPasswordIsRefused() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init"],
                                  steps: [.expect("new password: "), .send("\n")],
                                  environment: sandbox.environment())
        #expect(r.exit == 1)
        #expect(r.text == "new password: \nvault: empty password\n")
    }

    @Test func endOfInputAtThePromptIsRefused() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init"],
                                  steps: [.expect("new password: "), .send("\u{4}")],
                                  environment: sandbox.environment())
        #expect(r.exit == 1)
        #expect(r.text == "new password: \nvault: no password entered\n")
        #expect(r.echo_after)
    }

    /// It dies by SIGINT after restoring echo (issue 43, item 1): not exit
    /// 130, which lets a shell loop go on to its next command.
    @Test func controlCAtThePromptDiesBySIGINTWithEchoRestored() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init"],
                                  steps: [.expect("new password: "), .send("half-typed\u{3}")],
                                  environment: sandbox.environment())
        #expect(r.exit == nil)
        #expect(r.signal == SIGINT)
        #expect(r.echo_at_expect == [false])
        #expect(r.echo_after)
        #expect(!r.transcript.contains("half-typed"))
        #expect(r.text == "new password: \nvault: interrupted\n")
    }

    @Test func controlCWhileThePasswordCommandRunsDiesBySIGINT() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init", "--password-command", "echo waiting >&2; sleep 30"],
                                  steps: [.expect("waiting\r\n"), .send("\u{3}")],
                                  environment: sandbox.environment(), timeout: 10)
        #expect(r.timed_out == false)
        #expect(r.signal == SIGINT)
        #expect(r.text == "waiting\n^Cvault: interrupted\n")  // ^C: the terminal echoes it, echo is on here
    }

    @Test func explicitSourceWinsOverTheTerminal() throws {
        // A password source given explicitly wins over the terminal: no prompt.
        try sandbox.file("pw", "")
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init", "--password-file", sandbox.path + "/pw"],
                                  steps: [], environment: sandbox.environment())
        #expect(r.exit == 1)
        #expect(r.text == "vault: password file '\(sandbox.path)/pw' is empty\n")
    }
}

import Testing

/// The password prompt on a real (pseudo-)terminal: echo is off while the
/// user types, the typed password never appears on screen, the terminal is
/// left as it was, and Ctrl-C at the prompt exits 130 with echo restored.
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

    @Test func mismatchedNewPasswordsAreRefused() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init"],
                                  steps: [.expect("new password: "), .send("first\n"),
                                          .expect("repeat new password: "), .send("second\n")],
                                  environment: sandbox.environment())
        #expect(r.exit == 1)
        #expect(r.text == "new password: \nrepeat new password: \nvault: the passwords do not match\n")
        #expect(r.echo_after)
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

    @Test func controlCAtThePromptExits130WithEchoRestored() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init"],
                                  steps: [.expect("new password: "), .send("half-typed\u{3}")],
                                  environment: sandbox.environment())
        #expect(r.exit == 130)
        #expect(r.signal == nil)
        #expect(r.echo_at_expect == [false])
        #expect(r.echo_after)
        #expect(!r.transcript.contains("half-typed"))
        #expect(r.text == "new password: \nvault: interrupted\n")
    }

    @Test func controlCWhileThePasswordCommandRunsExits130() throws {
        let r = try PTYDriver.run(["--vault", sandbox.path + "/v", "init", "--password-command", "echo waiting >&2; sleep 30"],
                                  steps: [.expect("waiting\r\n"), .send("\u{3}")],
                                  environment: sandbox.environment(), timeout: 10)
        #expect(r.timed_out == false)
        #expect(r.exit == 130)
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

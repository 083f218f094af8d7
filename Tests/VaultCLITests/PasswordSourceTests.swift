import Testing

/// Where the password comes from, without a terminal: every child of the
/// harness runs in a new session with no controlling terminal.
///
/// `init` reads its password before anything else touches the disk, so its
/// errors show which source was used; the other commands read theirs only
/// once the vault is found, which needs the core.
@Suite struct PasswordSourceTests {
    let sandbox: Sandbox
    init() throws { sandbox = try Sandbox() }

    static let noSource = """
        vault: no password source: no terminal, and no --password-file or --password-command
        hint: give --password-file FILE or --password-command CMD, or set VAULT_PASSWORD_FILE

        """

    @Test(arguments: [["list"], ["get", "x"], ["restore", "x"], ["remove", "x"], ["rename", "x", "y"],
                      ["passwd"], ["check"], ["init"], ["--vault", "elsewhere", "check", "--read-data"]])
    func noTerminalAndNoSourceExitsTwo(args: [String]) throws {
        let r = try sandbox.run(args)
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == Self.noSource)
    }

    @Test func passwdWithoutATerminalNeedsANewPasswordFile() throws {
        try sandbox.file("old", "old password\n")
        let r = try sandbox.run(["passwd", "--password-file", "old"])
        #expect(r.status == 2)
        #expect(r.stderr == "vault: no terminal to ask for the new password\nhint: use --new-password-file FILE\n")
    }

    @Test func missingPasswordFile() throws {
        let r = try sandbox.run(["init", "--password-file", "nope"])
        #expect(r.status == 1)
        #expect(r.stderr == "vault: cannot read password file 'nope': no such file or directory\n")
    }

    @Test func passwordFileAfterTheCommandAndWithEquals() throws {
        for args in [["--password-file=nope", "init"], ["init", "--password-file=nope"], ["init", "--password-file", "nope"]] {
            let r = try sandbox.run(args)
            #expect(r.stderr == "vault: cannot read password file 'nope': no such file or directory\n")
        }
    }

    @Test func emptyPasswordFileIsRefused() throws {
        for contents in ["", "\n", "\r\n"] {
            try sandbox.file("pw", contents)
            let r = try sandbox.run(["init", "--password-file", "pw"])
            #expect(r.status == 1)
            #expect(r.stderr == "vault: password file 'pw' is empty\n")
        }
    }

    @Test func overlongPasswordFileIsRefused() throws {
        try sandbox.file("pw", String(repeating: "x", count: 4097))
        let r = try sandbox.run(["init", "--password-file", "pw"])
        #expect(r.status == 1)
        #expect(r.stderr == "vault: password file 'pw' is longer than 4096 bytes\n")
    }

    /// Once init is wired, tests that get past the password create a vault:
    /// cheap Argon2id settings keep them fast.
    static let cheapInit = ["init", "--kdf-memory", "8", "--kdf-passes", "1"]
    static let weakAllowed = ["VAULT_ALLOW_WEAK_KDF": "1"]

    @Test func longestPasswordFileWithCRLFIsAccepted() throws {
        try sandbox.file("pw", String(repeating: "x", count: 4096) + "\r\n")
        let r = try sandbox.run(Self.cheapInit + ["--password-file", "pw"], Self.weakAllowed)
        #expect(!r.stderr.contains("password file"))
        #expect(r.status != 2)
    }

    @Test func passwordFileReadableByOthersIsWarnedAbout() throws {
        try sandbox.file("pw", "", mode: 0o644)
        let r = try sandbox.run(["init", "--password-file", "pw"])
        #expect(r.stderr == """
            vault: warning: password file 'pw' can be read by other users
            hint: chmod 600 'pw'
            vault: password file 'pw' is empty

            """)
    }

    @Test func passwordCommandFailures() throws {
        let cases: [(String, String)] = [
            ("exit 3", "password command failed with exit status 3"),
            ("kill -9 $$", "password command was killed by signal 9"),
            ("echo", "password command printed no password"),
            ("head -c 100000 /dev/zero", "password command printed more than 4096 bytes"),
        ]
        for (command, message) in cases {
            let r = try sandbox.run(["init", "--password-command", command])
            #expect(r.status == 1, "\(command)")
            #expect(r.stderr == "vault: \(message)\n", "\(command)")
        }
    }

    @Test func optionsComeBeforeEnvironmentAndFileBeforeCommand() throws {
        try sandbox.file("good", "secret\n")
        let both = ["VAULT_PASSWORD_FILE": "env-file", "VAULT_PASSWORD_COMMAND": "exit 7"]
        // --password-file beats both variables.
        var r = try sandbox.run(["init", "--password-file", "opt-file"], both)
        #expect(r.stderr == "vault: cannot read password file 'opt-file': no such file or directory\n")
        // --password-command beats both variables.
        r = try sandbox.run(["init", "--password-command", "exit 5"], both)
        #expect(r.stderr == "vault: password command failed with exit status 5\n")
        // VAULT_PASSWORD_FILE beats VAULT_PASSWORD_COMMAND.
        r = try sandbox.run(["init"], both)
        #expect(r.stderr == "vault: cannot read password file 'env-file': no such file or directory\n")
        // Then VAULT_PASSWORD_COMMAND; an empty variable counts as unset.
        r = try sandbox.run(["init"], ["VAULT_PASSWORD_FILE": "", "VAULT_PASSWORD_COMMAND": "exit 7"])
        #expect(r.stderr == "vault: password command failed with exit status 7\n")
    }

    @Test func passwordCommandRunsWithACleanProcessState() throws {
        // The command reports on itself and on vault (its parent): vault's
        // hardening holds (umask 077, no core dumps, inherited), and the
        // command gets no blocked signals and a default SIGPIPE.
        let probe = """
            umask > report; grep 'Max core file size' /proc/$PPID/limits >> report
            grep -E '^Sig(Blk|Ign)' /proc/self/status >> report; echo secret
            """
        _ = try sandbox.run(Self.cheapInit + ["--password-command", probe], Self.weakAllowed)
        let report = try sandbox.read("report").split(separator: "\n").map(String.init)
        #expect(report.count == 4)
        #expect(report.first == "0077")
        #expect(report.dropFirst().first?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2)
            == ["0", "0"])
        #expect(report.contains("SigBlk:\t0000000000000000"))
        let ignored = report.first { $0.hasPrefix("SigIgn:") }.flatMap { UInt64($0.dropFirst(8), radix: 16) }
        #expect(ignored.map { $0 & (1 << (13 - 1)) } == 0, "SIGPIPE (13) must not be ignored in the child")
    }
}

import Testing

/// Command-line mistakes: exit 2, nothing on stdout, and exactly one
/// `vault: ...` line and one hint on stderr.
@Suite struct UsageErrorTests {
    let sandbox: Sandbox
    init() throws { sandbox = try Sandbox() }

    struct Case: CustomTestStringConvertible, Sendable {
        let args: [String]
        let message: String
        /// The command whose help the hint points at; nil for 'vault --help'.
        let page: String?
        var testDescription: String { args.joined(separator: " ") }
        var stderr: String { "vault: \(message)\nhint: see 'vault\(page.map { " \($0)" } ?? "") --help'\n" }
    }

    static let cases: [Case] = [
        Case(args: ["--vault", "v"], message: "missing command", page: nil),
        Case(args: ["frob"], message: "unknown command 'frob'", page: nil),
        Case(args: ["--frob"], message: "unknown option '--frob'", page: nil),
        Case(args: ["list", "--frob"], message: "unknown option '--frob'", page: "list"),
        Case(args: ["--json", "list"], message: "option '--json' must come after the command", page: "list"),
        Case(args: ["info", "extra"], message: "unexpected argument 'extra'", page: "info"),
        Case(args: ["--passphrase-file", "F", "kit", "recover"],
             message: "option '--passphrase-file' must come after the command: 'vault kit ... --passphrase-file'", page: "kit"),
        Case(args: ["list", "--json=yes"], message: "option '--json' takes no value", page: "list"),
        Case(args: ["--vault"], message: "option '--vault' needs a value", page: nil),
        Case(args: ["--vault=", "list"], message: "option '--vault' needs a value", page: "list"),
        Case(args: ["get"], message: "missing NAME", page: "get"),
        Case(args: ["get", "a", "b"], message: "unexpected argument 'b'", page: "get"),
        Case(args: ["get", "a", "-o"], message: "option '-o' needs a value", page: "get"),
        Case(args: ["get", "a", "-o", "x", "--output=y"], message: "option '--output' given twice", page: "get"),
        Case(args: ["--vault", "a", "list", "--vault=b"], message: "option '--vault' given twice", page: "list"),
        Case(args: ["add"], message: "missing PATH", page: "add"),
        Case(args: ["add", "-"], message: "reading standard input ('-') needs --name", page: "add"),
        Case(args: ["add", "a", "b", "--name", "x"], message: "--name needs exactly one PATH", page: "add"),
        Case(args: ["restore"], message: "missing NAME", page: "restore"),
        Case(args: ["remove"], message: "missing NAME", page: "remove"),
        Case(args: ["rename", "a"], message: "missing NEWNAME", page: "rename"),
        Case(args: ["rename", "a", "b", "c"], message: "unexpected argument 'c'", page: "rename"),
        // `--` ends options: "-a" is the NAME, so NEWNAME is what is missing.
        Case(args: ["rename", "--", "-a"], message: "missing NEWNAME", page: "rename"),
        Case(args: ["rename", "-a", "b"], message: "unknown option '-a'", page: "rename"),
        Case(args: ["passwd", "x"], message: "unexpected argument 'x'", page: "passwd"),
        Case(args: ["check", "--fix"], message: "unknown option '--fix'", page: "check"),
        Case(args: ["init", "--kdf-memory", "lots"], message: "option '--kdf-memory' needs a whole number, not 'lots'",
             page: "init"),
        Case(args: ["init", "--kdf-memory=-1"], message: "option '--kdf-memory' needs a whole number, not '-1'",
             page: "init"),
        // The header's own limits (KDFLimits): anything above would make a vault that never opens.
        Case(args: ["init", "--kdf-memory", "2049"], message: "--kdf-memory 2049 MiB is above the maximum of 2048",
             page: "init"),
        Case(args: ["init", "--kdf-lanes", "0"], message: "--kdf-lanes 0 is below the minimum of 1", page: "init"),
        Case(args: ["init", "--kdf-lanes", "9"], message: "--kdf-lanes 9 is above the maximum of 8", page: "init"),
        Case(args: ["init", "--kdf-passes", "17"], message: "--kdf-passes 17 is above the maximum of 16", page: "init"),
        Case(args: ["kit", "export", "--kdf-passes", "17"], message: "--kdf-passes 17 is above the maximum of 16",
             page: "kit"),
        // Global options after the command are still global.
        Case(args: ["list", "--password-file", "a", "--password-command", "b"],
             message: "--password-file and --password-command cannot be used together", page: nil),
    ]

    @Test(arguments: cases)
    func usageErrorExitsTwoWithOneLineAndAHint(_ c: Case) throws {
        let r = try sandbox.run(c.args)
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == c.stderr)
    }

    @Test func weakKDFIsRefusedWithoutTheEnvironmentSwitch() throws {
        let r = try sandbox.run(["init", "--kdf-passes", "1"])
        #expect(r.status == 2)
        #expect(r.stderr == """
            vault: --kdf-passes 1 is below the minimum of 3
            hint: weaker settings are for tests and demos only: set VAULT_ALLOW_WEAK_KDF=1 to allow them

            """)
        let memory = try sandbox.run(["init", "--kdf-memory=8"])
        #expect(memory.status == 2)
        #expect(memory.stderr.hasPrefix("vault: --kdf-memory 8 MiB is below the minimum of 64\n"))
    }

    @Test func weakKDFIsAllowedWithTheEnvironmentSwitch() throws {
        // Past validation, init goes on to read its password: the error is now
        // about the (missing) password file, not the KDF.
        let r = try sandbox.run(["init", "--kdf-memory=8", "--kdf-passes", "1", "--password-file", "missing"],
                                ["VAULT_ALLOW_WEAK_KDF": "1"])
        #expect(r.status == 1)
        #expect(r.stderr == "vault: cannot read password file 'missing': no such file or directory\n")
    }

    @Test func controlCharactersInMessagesAreEscaped() throws {
        let r = try sandbox.run(["fr\u{1B}[2Job\u{7}"])
        #expect(r.status == 2)
        #expect(r.stderr == "vault: unknown command 'fr\\x1B[2Job\\x07'\nhint: see 'vault --help'\n")
    }

    @Test func noHomeAndNoVaultSettingIsAUsageError() throws {
        // A relative XDG_DATA_HOME is invalid by the XDG spec and ignored.
        var env = sandbox.environment(["XDG_DATA_HOME": "relative/data"])
        env["HOME"] = nil
        let r = try CLIHarness.run(["info"], environment: env)
        #expect(r.status == 2)
        #expect(r.stderr == "vault: cannot tell where the vault is: HOME is not set\nhint: use --vault DIR, or set VAULT_DIR\n")
    }
}

import Foundation
import Testing
import VaultCore

/// The manual pages in `man/` and the Makefile's `install`/`uninstall`:
/// both pages render without a single groff or man warning, `vault.1`
/// names every command and every option that `--help` shows, and
/// `make install` puts the binary, pages and completions in their places.
@Suite struct ManPageTests {
    let sandbox: Sandbox
    init() throws { sandbox = try Sandbox() }

    static let root = CLIHarness.packageRoot
    static let pages = ["man/vault.1", "man/vault-format.5"]
    static let commands = ["init", "add", "list", "info", "get", "restore", "remove", "forget", "rename",
                           "passwd", "check", "open", "rekey", "kit", "move", "mount", "remote", "push", "pull", "clone", "share", "key", "upgrade",
                           "unlock", "lock", "backup", "snapshots", "thin", "run", "schedule", "status"]

    /// Runs `argv[0]` (a program found on PATH) with the harness's clean environment.
    func tool(_ argv: [String], cwd: String? = nil, _ extra: [String: String] = [:]) throws -> CLIHarness.Result {
        let env = CLIHarness.environment(home: sandbox.path, extra)
        return try CLIHarness.run(argv, environment: env, cwd: cwd, timeout: 120, executable: "/usr/bin/env")
    }

    func page(_ name: String) throws -> String {
        try String(contentsOfFile: Self.root + "/" + name, encoding: .utf8)
    }

    @Test(arguments: pages) func rendersWithoutWarnings(_ page: String) throws {
        let path = Self.root + "/" + page
        let groff = try tool(["groff", "-ww", "-man", "-Tutf8", path])
        #expect(groff.status == 0)
        #expect(groff.stderr == "", "groff -ww \(page)")
        #expect(groff.stdout.count > 1000)
        let man = try tool(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", path],
                           ["LC_ALL": "C.UTF-8", "MANROFFSEQ": "", "MANWIDTH": "80"])
        #expect(man.status == 0)
        #expect(man.stderr == "", "man --warnings \(page)")
        // mandoc is stricter than groff (a .TH date it cannot parse, an empty paragraph).
        let lint = try tool(["mandoc", "-T", "lint", "-W", "warning", path])
        #expect(lint.status == 0, "mandoc -T lint \(page): \(lint.stdoutText)\(lint.stderr)")
        #expect(lint.stdoutText + lint.stderr == "", "mandoc -T lint \(page)")
    }

    /// vault-format.5 describes the header and `remotes` versions vault
    /// writes (it fell behind once: version 1 while version 3 was written).
    @Test func theFormatPageNamesTheVersionsWritten() throws {
        let text = try page("man/vault-format.5")
        let header = try #require(text.range(of: ".SH HEADER\n")).upperBound
        let next = try #require(text.range(of: ".SH ", range: header..<text.endIndex)).lowerBound
        let section = String(text[header..<next])
        #expect(section.hasPrefix("What vault writes is format version \(VaultHeader.currentVersion):"), "\(section.prefix(80))")
        #expect(section.contains("version 0x0\(VaultHeader.currentVersion)"))
        #expect(text.contains(".BR \"vault remotes v2\" :"))
    }

    /// Where each section of docs/FORMAT.md is in vault-format.5; nil: not
    /// there (the move and the agent are wire protocols, no file in a vault;
    /// vault.1 covers them). Test vectors stay in FORMAT.md.
    static let formatSections: [(format: String, page: String?)] = [
        ("Vault layout", "LAYOUT"), ("Key hierarchy", "KEY HIERARCHY"), ("Vault header", "HEADER"),
        ("Vault header, version 2", "HEADER"), ("Vault header, version 3", "HEADER"), ("Vault header, version 4", "HEADER"),
        ("Manifest", "MANIFEST"), ("Manifest entry", "MANIFEST ENTRY"), ("Drop-in envelope", "DROP\\-IN ENVELOPE"),
        ("Attempt delay", "ATTEMPTS"), ("Rekey", "REKEY.PENDING"), ("Recovery kit", "RECOVERY KIT"),
        ("Folder items", "FOLDER ITEMS"), ("Folder indexes", "FOLDER ITEMS"), ("Dropped folder indexes", "FOLDER ITEMS"), ("Item content", "ITEM CONTENT"), ("Device move", nil),
        ("Remote copy", "REMOTE COPY"), ("Unlock agent", nil), ("Backups", "BACKUPS"),
    ]

    /// Each format's layout line, `"MAGIC" (8) || version 0xNN`, by magic:
    /// the versions a text lays out.
    static func layoutVersions(in text: String) -> [String: Set<Int>] {
        var found: [String: Set<Int>] = [:]
        for m in text.matches(of: /"(VAULT[A-Z]{3})" \(8\) \|\| version 0x([0-9a-f]{2})/) {
            found[String(m.output.1), default: []].insert(Int(m.output.2, radix: 16)!)
        }
        return found
    }

    /// vault-format.5 has FORMAT.md's sections (or FORMAT.md says where
    /// not) and lays out the same versions of every format, so that it
    /// cannot fall behind again (it described version-1 manifests,
    /// envelopes and rekey switches while version 3, 2 and 3 were written).
    @Test func theFormatPageFollowsFormatMd() throws {
        let format = try page("docs/FORMAT.md"), manual = try page("man/vault-format.5")
        let headings = format.matches(of: /(?m)^(##+) (.+)$/).map { (level: $0.output.1.count, title: String($0.output.2)) }
        let mapped = Set(Self.formatSections.map(\.format))
        for h in headings where h.level == 2 && !h.title.hasPrefix("Test vector") {
            #expect(mapped.contains(h.title), "FORMAT.md's section '\(h.title)': add it to vault-format.5 and to formatSections")
        }
        for s in mapped { #expect(headings.contains { $0.title == s }, "FORMAT.md has no section '\(s)'") }
        let pageSections = Set(manual.matches(of: /(?m)^\.SH (.+)$/).map { String($0.output.1) })
        #expect(pageSections.subtracting(["NAME", "DESCRIPTION", "SEE ALSO"]) == Set(Self.formatSections.compactMap(\.page)))

        // The versions laid out, format by format; the header's newest is
        // FORMAT.md's last "Vault header, version N" and the code's.
        var expected = Self.layoutVersions(in: format)
        let newestHeader = headings.compactMap { Int($0.title.replacing("Vault header, version ", with: "")) }.max()
        expected["VAULTHDR"] = [try #require(newestHeader)]
        #expect(Self.layoutVersions(in: manual) == expected)
        #expect(expected["VAULTHDR"] == [Int(VaultHeader.currentVersion)])
        #expect(expected["VAULTMAN"] == [Int(Manifest.version)])
        #expect(expected["VAULTKIT"] == [Int(RecoveryKit.version)])
        #expect(Set(["VAULTMAN", "VAULTENV", "VAULTATT", "VAULTRKY", "VAULTKIT"]).isSubset(of: expected.keys))
    }

    /// The option spellings a help page shows: `--long-name` and `-o`/`-h`.
    static func options(in help: String) -> Set<String> {
        var found = Set<String>()
        for m in help.matches(of: /--[a-z][a-z-]*/) { found.insert(String(m.output)) }
        for m in help.matches(of: /(?m)(?:^|[^A-Za-z0-9_-])(-[oh])(?![A-Za-z0-9_-])/) { found.insert(String(m.output.1)) }
        return found
    }

    /// Whether `word` occurs in `text` not as part of a longer option or word.
    static func mentions(_ text: String, _ word: String) -> Bool {
        var rest = text[...]
        while let r = rest.range(of: word) {
            let before = r.lowerBound == text.startIndex ? nil : text[text.index(before: r.lowerBound)]
            let after = r.upperBound == text.endIndex ? nil : text[r.upperBound]
            let boundary: (Character?) -> Bool = { c in
                guard let c else { return true }
                return !(c.isLetter || c.isNumber || c == "-" || c == "_")
            }
            if boundary(before) && boundary(after) { return true }
            rest = text[r.upperBound...]
        }
        return false
    }

    @Test func manPageNamesEveryCommandAndOption() throws {
        let manual = try page("man/vault.1").replacingOccurrences(of: "\\-", with: "-")
        let top = try sandbox.run(["--help"])
        #expect(top.status == 0)

        // Every command listed in `vault --help` (and only the known ones).
        let listed = top.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0 != "Commands:" }.dropFirst().prefix { !$0.isEmpty }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(Set(listed) == Set(Self.commands))
        for command in listed {
            // An entry of its own in COMMANDS: `.B init`, `.BI add " PATH"`, `.BR "kit export" ...`.
            #expect(manual.contains(try Regex("(?m)^\\.(B|BI|BR) \"?\(command)\\b")), "no entry for \(command)")
            #expect(Self.mentions(manual, "vault " + command) || manual.contains(".B \(command)"),
                    "\(command) not in SYNOPSIS")
        }

        var options = Self.options(in: top.stdoutText)
        for command in Self.commands {
            let help = try sandbox.run([command, "--help"])
            #expect(help.status == 0, "\(command) --help")
            options.formUnion(Self.options(in: help.stdoutText))
        }
        #expect(options.isSuperset(of: ["--vault", "--password-file", "--password-command", "--quiet",
                                        "--help", "--version", "-h", "-o", "--output", "--json"]))
        for option in options.sorted() {
            #expect(Self.mentions(manual, option), "\(option) is in --help but not in man/vault.1")
        }
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "GLOBAL OPTIONS", "ENVIRONMENT",
                        "FILES", "EXIT STATUS", "EXAMPLES", "SECURITY", "SEE ALSO"] {
            #expect(manual.contains(".SH \(section)\n") || manual.contains(".SH \"\(section)\"\n"), "\(section)")
        }
        for variable in ["VAULT_DIR", "VAULT_PASSWORD_FILE", "VAULT_PASSWORD_COMMAND", "VAULT_ALLOW_WEAK_KDF",
                         "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "VISUAL", "EDITOR", "SHELL", "NO_COLOR"] {
            #expect(Self.mentions(manual, variable), "\(variable) not in ENVIRONMENT")
        }
        for code in ["0", "1", "2", "3", "10", "11", "12", "13", "14", "15", "16", "17", "20", "130"] {
            #expect(manual.contains(".B \(code)\n"), "exit status \(code)")
        }
    }

    @Test func makeInstallAndUninstall() throws {
        let destdir = sandbox.path + "/dest"
        let args = ["-o", "build", "DESTDIR=\(destdir)", "PREFIX=/usr", "BIN=\(CLIHarness.binary)"]
        let install = try tool(["make", "install"] + args, cwd: Self.root)
        #expect(install.status == 0, "make install: \(install.stderr)")

        let fm = FileManager.default
        let usr = destdir + "/usr"
        var expected: [(String, Int)] = [("bin/vault", 0o755),
                                        ("share/man/man1/vault.1", 0o644),
                                        ("share/man/man5/vault-format.5", 0o644)]
        for (source, target) in [("completions/vault.bash", "share/bash-completion/completions/vault"),
                                 ("completions/_vault", "share/zsh/site-functions/_vault"),
                                 ("completions/vault.fish", "share/fish/vendor_completions.d/vault.fish")]
        where fm.fileExists(atPath: Self.root + "/" + source) {
            expected.append((target, 0o644))
            #expect(fm.contentsEqual(atPath: Self.root + "/" + source, andPath: usr + "/" + target), "\(target)")
        }
        for (file, mode) in expected {
            let attributes = try fm.attributesOfItem(atPath: usr + "/" + file)
            #expect((attributes[.posixPermissions] as? Int) == mode, "\(file) mode")
        }
        #expect(fm.contentsEqual(atPath: Self.root + "/man/vault.1", andPath: usr + "/share/man/man1/vault.1"))
        #expect(fm.contentsEqual(atPath: CLIHarness.binary, andPath: usr + "/bin/vault"))

        let uninstall = try tool(["make", "uninstall"] + args, cwd: Self.root)
        #expect(uninstall.status == 0, "make uninstall: \(uninstall.stderr)")
        for (file, _) in expected {
            #expect(!fm.fileExists(atPath: usr + "/" + file), "\(file) left after uninstall")
        }
        // Nothing but (empty) directories is left behind.
        let left = (fm.enumerator(atPath: destdir)?.allObjects as? [String] ?? []).filter { path in
            var isDirectory: ObjCBool = false
            return fm.fileExists(atPath: destdir + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        #expect(left == [])
    }
}

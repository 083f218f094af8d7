import Foundation
import Testing

/// The shell completions in completions/: each is loaded in its own shell
/// (bash with bash-completion, zsh with compinit, fish) and asked for a few
/// completions. Item names are secret: no script may run vault itself.
@Suite struct CompletionTests {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // CompletionTests.swift, VaultCLITests, Tests
        return url.path
    }()
    static let dir = root + "/completions"
    static let bashFile = dir + "/vault.bash"
    static let zshFile = dir + "/_vault"
    static let fishFile = dir + "/vault.fish"
    static let bashCompletion = "/usr/share/bash-completion/bash_completion"

    struct Output { var status: Int32; var stdout: String; var stderr: String }

    /// Runs `argv` in `cwd` with a minimal environment and a private HOME.
    static func run(_ argv: [String], cwd: String) throws -> Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = argv
        p.currentDirectoryURL = URL(fileURLWithPath: cwd)
        let home = (cwd as NSString).deletingLastPathComponent + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        p.environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": home + "/.config", "XDG_DATA_HOME": home + "/.local/share",
            "XDG_CACHE_HOME": home + "/.cache", "TERM": "dumb",
        ]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Output(status: p.terminationStatus,
                      stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self))
    }

    /// A temporary working directory holding only a directory `somedir` and a
    /// file `somefile` (HOME is its sibling `home`).
    static func scratch() throws -> String {
        let d = FileManager.default.temporaryDirectory
            .appendingPathComponent("vault-completion-\(UUID().uuidString)").path + "/work"
        try FileManager.default.createDirectory(atPath: d + "/somedir", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: d + "/somefile", contents: Data("x".utf8))
        return d
    }

    static func shellQuote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    static func available(_ path: String) -> Bool { FileManager.default.isExecutableFile(atPath: path) }

    // MARK: bash

    /// The words bash would offer for `line` (the cursor at its end), one a line.
    static func bashComplete(_ lines: [String], cwd: String) throws -> [String: [String]] {
        var script = """
            source \(bashCompletion) || exit 90
            source \(shellQuote(bashFile)) || exit 91
            complete -p vault | grep -q -- '-F _vault' || exit 92
            t() {
                local line=$1
                read -ra COMP_WORDS <<<"$line"
                [[ $line == *" " || ${#COMP_WORDS[@]} -eq 0 ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMP_LINE=$line COMP_POINT=${#line}
                COMPREPLY=()
                _vault vault "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '@@%s\\n' "$line"
                printf '%s\\n' "${COMPREPLY[@]}"
            }

            """
        for l in lines { script += "t \(shellQuote(l))\n" }
        let r = try run(["bash", "--norc", "--noprofile", "-c", script], cwd: cwd)
        #expect(r.status == 0, "bash exited \(r.status): \(r.stderr)")
        #expect(r.stderr == "", "bash stderr: \(r.stderr)")
        var result: [String: [String]] = [:]
        var current: String?
        for l in r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if l.hasPrefix("@@") { current = String(l.dropFirst(2)); result[current!] = [] }
            else if let c = current, !l.isEmpty { result[c, default: []].append(l) }
        }
        return result
    }

    @Test(.enabled(if: available("/bin/bash") && FileManager.default.fileExists(atPath: bashCompletion)))
    func bashCompletesCommandsOptionsAndPaths() throws {
        let cwd = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: (cwd as NSString).deletingLastPathComponent) }
        let c = try Self.bashComplete([
            "vault ", "vault --quiet ki", "vault --vault somedir ",
            "vault get --", "vault get x -o ", "vault kit ", "vault kit recover ",
            "vault kit recover kit.txt --", "vault --vault ", "vault restore a --to ",
            "vault add ", "vault get ", "vault remove ", "vault --password-command ",
            "vault open x --with ", "vault list --", "vault backup --exclude-c", "vault snapshots ",
            "vault snapshots restore x --in",
            "vault move ", "vault move receive --", "vault move send --", "vault move receive --into ",
            "vault move send --code-file ", "vault move receive --code-file ", "vault move receive --listen ",
            "vault move receive ", "vault move send ",
        ], cwd: cwd)

        let commands = c["vault "] ?? []
        for cmd in ["init", "add", "list", "info", "get", "restore", "remove", "rename",
                    "passwd", "check", "open", "rekey", "kit", "move", "remote", "push", "pull", "clone", "share", "key", "upgrade",
                    "backup", "snapshots"] {
            #expect(commands.contains(cmd), "missing command \(cmd): \(commands)")
        }
        #expect(c["vault --quiet ki"] == ["kit"])
        #expect(c["vault backup --exclude-c"] == ["--exclude-caches"])
        #expect(c["vault snapshots "] == ["list", "ls", "restore", "dump", "find", "diff", "stats", "tag", "rewrite", "forget", "prune"])
        #expect(c["vault snapshots restore x --in"] == ["--include"])
        #expect((c["vault --vault somedir "] ?? []).contains("init"))

        let getOpts = c["vault get --"] ?? []
        for o in ["--output", "--password-file", "--vault", "--password-command", "--quiet", "--help", "--version"] {
            #expect(getOpts.contains(o), "vault get --: missing \(o): \(getOpts)")
        }
        #expect(!getOpts.contains("--json"))
        #expect(Set(c["vault get x -o "] ?? []) == ["somedir", "somefile"])
        #expect(Set(c["vault kit "] ?? []) == ["export", "recover"])
        #expect(Set(c["vault kit recover "] ?? []) == ["somedir", "somefile"])
        let recoverOpts = c["vault kit recover kit.txt --"] ?? []
        #expect(recoverOpts.contains("--passphrase-file") && recoverOpts.contains("--new-password-file"))
        #expect(!recoverOpts.contains("--generate"))
        #expect(c["vault --vault "] == ["somedir"], "directories only")
        #expect(c["vault restore a --to "] == ["somedir"], "directories only")
        #expect(Set(c["vault add "] ?? []) == ["somedir", "somefile"])
        // Item names are secret, free text is free: nothing is offered.
        for l in ["vault get ", "vault remove ", "vault --password-command ", "vault open x --with "] {
            #expect(c[l] == [], "\(l) offered \(c[l] ?? [])")
        }
        #expect((c["vault list --"] ?? []).contains("--json"))

        #expect(Set(c["vault move "] ?? []) == ["receive", "send"])
        let receiveOpts = Set(c["vault move receive --"] ?? [])
        #expect(receiveOpts.isSuperset(of: ["--into", "--listen", "--code-file", "--no-verify", "--password-file"]))
        #expect(!receiveOpts.contains("--keep"))
        let sendOpts = Set(c["vault move send --"] ?? [])
        #expect(sendOpts.isSuperset(of: ["--code-file", "--keep", "--password-file"]))
        #expect(sendOpts.isDisjoint(with: ["--into", "--listen", "--no-verify"]))
        #expect(c["vault move receive --into "] == ["somedir"], "directories only")
        #expect(Set(c["vault move send --code-file "] ?? []) == ["somedir", "somefile"])
        #expect(Set(c["vault move receive --code-file "] ?? []) == ["somedir", "somefile"])
        // An address, a move code: free text, nothing is offered; nor after the action.
        for l in ["vault move receive --listen ", "vault move receive ", "vault move send "] {
            #expect(c[l] == [], "\(l) offered \(c[l] ?? [])")
        }
    }

    /// Issue 43, item 13: option values are not files, and remote names
    /// are offered where a remote goes (from the vault's plain-text
    /// `remotes` file, never by running vault).
    @Test(.enabled(if: available("/bin/bash") && FileManager.default.fileExists(atPath: bashCompletion)))
    func bashCompletesOptionValuesAndRemoteNames() throws {
        let cwd = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: (cwd as NSString).deletingLastPathComponent) }
        let remotes = "vault remotes v2\nusb\t/mnt/usb\t0\t-\t-\noffsite\ts3:b/v\t3\t-\t-\n"
        let home = (cwd as NSString).deletingLastPathComponent + "/home"
        try FileManager.default.createDirectory(atPath: home + "/.local/share/vault", withIntermediateDirectories: true)
        try Data(remotes.utf8).write(to: URL(fileURLWithPath: home + "/.local/share/vault/remotes"))
        try Data("vault remotes v2\nnas\tsftp:nas:v\t0\t-\t-\n".utf8).write(to: URL(fileURLWithPath: cwd + "/somedir/remotes"))
        let c = try Self.bashComplete([
            "vault add x --compression ", "vault snapshots restore x --overwrite i", "vault push ", "vault pull o",
            "vault --vault somedir push ", "vault remote remove ", "vault check --remote ", "vault backup --to ",
            "vault add --exclude-file ", "vault snapshots forget --keep-hourly 3 ", "vault clone ",
        ], cwd: cwd)
        #expect(Set(c["vault add x --compression "] ?? []) == ["auto", "max", "off", "zstd", "xz"])
        #expect(c["vault snapshots restore x --overwrite i"] == ["if-changed"])
        #expect(Set(c["vault push "] ?? []) == ["usb", "offsite"])
        #expect(c["vault pull o"] == ["offsite"])
        #expect(c["vault --vault somedir push "] == ["nas"])
        #expect(Set(c["vault remote remove "] ?? []) == ["usb", "offsite"])
        #expect(Set(c["vault check --remote "] ?? []) == ["usb", "offsite"])
        #expect(Set(c["vault backup --to "] ?? []) == ["usb", "offsite"])
        #expect(Set(c["vault add --exclude-file "] ?? []) == ["somedir", "somefile"])
        #expect((c["vault snapshots forget --keep-hourly 3 "] ?? []).isEmpty, "a value is not a positional")
        #expect(Set(c["vault clone "] ?? []) == ["usb", "offsite"])
    }

    // MARK: zsh

    @Test(.enabled(if: available("/usr/bin/zsh") || available("/bin/zsh")))
    func zshFunctionLoadsAndIsRegistered() throws {
        let cwd = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: (cwd as NSString).deletingLastPathComponent) }
        let script = """
            autoload -U compinit
            fpath=(\(Self.shellQuote(Self.dir)) $fpath)
            compinit -u -d \(Self.shellQuote(cwd + "/../zcompdump"))
            print -r -- "comp=$_comps[vault]"
            autoload +X _vault || exit 93
            (( $+functions[_vault] )) && print -r -- loaded
            """
        let r = try Self.run(["zsh", "-f", "-c", script], cwd: cwd)
        #expect(r.status == 0, "zsh exited \(r.status): \(r.stderr)")
        #expect(r.stderr == "", "zsh stderr: \(r.stderr)")
        #expect(r.stdout.contains("comp=_vault\n"), "\(r.stdout)")
        #expect(r.stdout.contains("loaded\n"), "\(r.stdout)")
        let zparse = try Self.run(["zsh", "-n", Self.zshFile], cwd: cwd)
        #expect(zparse.status == 0, "zsh -n: \(zparse.stderr)")
    }

    // MARK: fish

    static func fishComplete(_ lines: [String], cwd: String) throws -> [String: [String]] {
        var script = "source \(shellQuote(fishFile)); or exit 94\n"
        for l in lines { script += "echo @@\(shellQuote(l)); complete -C\(shellQuote(l))\n" }
        let r = try run(["fish", "--no-config", "-c", script], cwd: cwd)
        #expect(r.status == 0, "fish exited \(r.status): \(r.stderr)")
        #expect(r.stderr == "", "fish stderr: \(r.stderr)")
        var result: [String: [String]] = [:]
        var current: String?
        for l in r.stdout.split(separator: "\n").map(String.init) {
            if l.hasPrefix("@@") { current = String(l.dropFirst(2)); result[current!] = [] }
            else if let c = current {
                result[c, default: []].append(String(l.split(separator: "\t", maxSplits: 1).first ?? ""))
            }
        }
        return result
    }

    @Test(.enabled(if: available("/usr/bin/fish")))
    func fishCompletesCommandsOptionsAndPaths() throws {
        let cwd = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: (cwd as NSString).deletingLastPathComponent) }
        let c = try Self.fishComplete([
            "vault ", "vault get --o", "vault kit ", "vault --vault ", "vault --vault=",
            "vault --vault somedir ", "vault get x -o ", "vault get ", "vault add ",
            "vault restore a --to ", "vault get x --",
            "vault move ", "vault move receive --", "vault move send --", "vault move receive --into ",
            "vault move receive --into=", "vault move send --code-file ", "vault move receive --listen ",
            "vault move send ",
        ], cwd: cwd)
        let commands = c["vault "] ?? []
        for cmd in ["init", "add", "get", "kit", "rekey", "move"] {
            #expect(commands.contains(cmd), "missing command \(cmd): \(commands)")
        }
        #expect(c["vault get --o"] == ["--output"])
        #expect(Set(c["vault kit "] ?? []) == ["export", "recover"])
        #expect(c["vault --vault "] == ["somedir/"], "directories only")
        #expect(c["vault --vault="] == ["--vault=somedir/"], "directories only")
        #expect((c["vault --vault somedir "] ?? []).contains("init"))
        #expect(Set(c["vault get x -o "] ?? []) == ["somedir/", "somefile"])
        #expect(c["vault get "] == [], "item names are not completed")
        #expect(Set(c["vault add "] ?? []) == ["somedir/", "somefile"])
        #expect(c["vault restore a --to "] == ["somedir/"])
        let getOpts = c["vault get x --"] ?? []
        #expect(getOpts.contains("--password-file") && getOpts.contains("--output"))

        #expect(Set(c["vault move "] ?? []) == ["receive", "send"])
        let receiveOpts = Set(c["vault move receive --"] ?? [])
        #expect(receiveOpts.isSuperset(of: ["--into", "--listen", "--code-file", "--no-verify", "--password-file"]))
        #expect(!receiveOpts.contains("--keep"))
        let sendOpts = Set(c["vault move send --"] ?? [])
        #expect(sendOpts.isSuperset(of: ["--code-file", "--keep", "--password-file"]))
        #expect(sendOpts.isDisjoint(with: ["--into", "--listen", "--no-verify"]))
        #expect(c["vault move receive --into "] == ["somedir/"], "directories only")
        #expect(c["vault move receive --into="] == ["--into=somedir/"], "directories only")
        #expect(Set(c["vault move send --code-file "] ?? []) == ["somedir/", "somefile"])
        #expect(c["vault move receive --listen "] == [], "an address is not completed")
        #expect(c["vault move send "] == [], "nothing after the action")
    }

    // MARK: all

    /// The binary's own commands and each command's options (its help's
    /// "Options:" section): what every script must offer.
    static func binaryCommands() throws -> [(command: String, options: Set<String>)] {
        func help(_ args: [String]) throws -> String {
            try CLIHarness.run(args, environment: ["PATH": "/usr/bin:/bin"], timeout: 30).stdoutText
        }
        var inCommands = false
        var result: [(String, Set<String>)] = []
        for line in try help(["help"]).split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "Commands:" { inCommands = true; continue }
            if inCommands && line.isEmpty { break }
            guard inCommands, let name = line.split(separator: " ").first else { continue }
            var options = Set<String>(), inOptions = false
            for l in try help(["help", String(name)]).split(separator: "\n", omittingEmptySubsequences: false) {
                if l == "Options:" { inOptions = true; continue }
                if inOptions && !l.hasPrefix(" ") { inOptions = false }
                guard inOptions, let m = l.firstMatch(of: /^  (?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*)/) else { continue }
                options.insert(String(m.1))
            }
            result.append((String(name), options))
        }
        return result
    }

    /// Every command of the built binary and each of its options completes
    /// in bash and fish (asked of the shells), and is in the zsh script's
    /// block for that command: a new command or option cannot be forgotten.
    @Test(.enabled(if: available("/bin/bash") && FileManager.default.fileExists(atPath: bashCompletion) && available("/usr/bin/fish")))
    func everyCommandAndOptionOfTheBinaryCompletes() throws {
        let cwd = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: (cwd as NSString).deletingLastPathComponent) }
        let commands = try Self.binaryCommands()
        #expect(commands.count >= 30 && commands.contains { $0.command == "schedule" })
        let zsh = try String(contentsOfFile: Self.zshFile, encoding: .utf8)
        for (shell, complete) in [("bash", Self.bashComplete), ("fish", Self.fishComplete)] {
            let first = try complete(["vault "] + commands.map { "vault \($0.command) " }, cwd)
            let actions = Dictionary(uniqueKeysWithValues: commands.map { c in
                (c.command, (first["vault \(c.command) "] ?? []).filter { !$0.hasPrefix("-") && !$0.hasPrefix("somedir") && $0 != "somefile" })
            })
            var lines = commands.map { "vault \($0.command) --" }
            for (c, acts) in actions { lines += acts.map { "vault \(c) \($0) --" } }
            let offered = try complete(lines, cwd)
            for (command, options) in commands {
                #expect((first["vault "] ?? []).contains(command), "\(shell): no command \(command)")
                let all = Set(([command] + (actions[command] ?? []).map { command + " " + $0 }).flatMap { offered["vault \($0) --"] ?? [] })
                let missing = options.subtracting(all)
                #expect(missing.isEmpty, "\(shell): vault \(command) does not offer \(missing.sorted())")
            }
        }
        let globals: Set<String> = ["--vault", "--password-file", "--password-command", "--key-file", "--slot", "--quiet", "--help", "--version"]
        for (command, all) in commands {
            #expect(zsh.contains("\n    '\(command):"), "zsh: \(command) is not in _vault_commands")
            let options = all.subtracting(globals)
            if options.isEmpty { continue }
            guard let start = zsh.range(of: "\n      \(command))") ?? zsh.range(of: "\n      \(command) |") else {
                Issue.record("zsh: no case for \(command)"); continue
            }
            let rest = zsh[start.upperBound...]
            let end = rest.firstMatch(of: /\n      [a-z|]+[ )]/)?.range.lowerBound ?? rest.endIndex
            let block = rest[..<end]
            let missing = options.filter { o in !["'", "'*", "}", ",", ")"].contains { block.contains($0 + o) } }
            #expect(missing.isEmpty, "zsh: vault \(command) does not offer \(missing.sorted())")
        }
    }


    /// Completion must never ask vault anything: item names are secret.
    @Test(arguments: [bashFile, zshFile, fishFile])
    func scriptNeverRunsVault(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") { continue }  // comments, #compdef
            // A call of vault would be the word vault in command position:
            // at the start, or after ( $( ` | ; && || or "command".
            let pattern = #"(^|[(`|;&]|\$\(|\bcommand\s+|\bexec\s+|\beval\s+)\s*(/\S*/)?vault(\s|$|[)`;|&"'])"#
            #expect(line.range(of: pattern, options: .regularExpression) == nil,
                    "\(path):\(n + 1) seems to run vault: \(line)")
            #expect(!line.contains("_call_program"), "\(path):\(n + 1): \(line)")
        }
    }
}

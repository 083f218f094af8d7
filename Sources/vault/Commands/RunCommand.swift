import System
import VaultBackup
import VaultConfig
import VaultCore
import VaultRemote

/// `vault run PROFILE`: one backup profile of the config file, with its
/// hooks and pings (issue 42; the file's shape is VaultConfig's ConfigFile).
struct RunCommand: Command {
    static let name = "run"
    static let abstract = "run a backup profile of the config file, with its hooks and pings"
    static let configOption = ValueOption<String>.text("--config", as: "FILE")
    static let ifDueFlag = FlagOption("--if-due")
    static let options = [configOption.spec, ifDueFlag.spec]
    static let help = """
        Usage: vault run PROFILE [--config FILE] [--if-due]

        Runs the backup a profile of the config file describes: its paths
        and options (every 'vault backup' option, by its long name), its
        vault or remote, the commands to run before it, after it and on an
        error, and a URL to ping. The file is $XDG_CONFIG_HOME/vault/config.yaml
        (else ~/.config/vault/config.yaml):

          profiles:
            home:
              paths: [~/Documents, ~/Photos]
              exclude: ['*.tmp']
              exclude-caches: true
              to: nas:/srv/vault
              hooks:
                before: ['mount /mnt/photos']
                after: ['umount /mnt/photos']
                error: ['logger -t vault "backup of home failed"']
              ping: https://hc-ping.com/YOUR-UUID
              notify: https://ntfy.sh/YOUR-TOPIC
              keep: {daily: 7, weekly: 4}

        A mistake in the file (an unknown key, a value of the wrong kind) is
        named with its line, and nothing runs (exit 2). The hooks run with
        /bin/sh, with VAULT_PROFILE set; 'after' and 'error' also get
        VAULT_EXIT_CODE, and, when a snapshot was made, VAULT_SNAPSHOT,
        VAULT_FILES, VAULT_BYTES and VAULT_BYTES_STORED. A 'before' hook
        that fails stops the run: no backup, the 'error' hooks, exit 1. The
        ping is a GET of URL/start, then of URL/EXITCODE when it ends (the
        healthchecks.io convention: /0 is success); 'notify' POSTs a line
        when a run ends (ntfy's way; 'notify-on: failure' for failures
        only). A ping or message that cannot be sent is a warning, never a
        failed backup. 'keep' then forgets this host's older snapshots
        ('snapshots forget --keep-daily 7 ... --prune'), which needs the
        password (the unlock agent, --password-file, or the profile's
        'password-file:', 'password-command:' or 'key-file:'): without it the
        run warns and exits 3, the backup made. 'check: {every: 1w,
        read-data-subset: 10%}' then runs 'vault check' (with the password
        too) when the last passed check is that old ('check: true': every
        run); what it finds is the run's exit code. 'push: [nas]' last runs
        'vault push nas' (no password needed); a push that fails fails the
        run. 'limit-upload' and 'limit-download' (KiB/s) bound what the run
        sends and receives, as the global options do.

        Options:
          --config FILE   another config file
          --if-due        only if a time of the profile's schedule has come
                          since its last run, else nothing, quietly (exit 0);
                          what a crontab line of 'vault schedule' runs

        Examples:
          vault run home
          vault run db --config /etc/vault/config.yaml
        """

    let profile: String
    let config: String?
    let ifDue: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        profile = try arguments.exactly("PROFILE")[0]
        config = try arguments.value(Self.configOption)
        ifDue = arguments.isSet(Self.ifDueFlag)
    }

    static func defaultPath(_ environment: [String: String]) -> String? {
        VaultLocation.configHome(environment).map { $0 + "/vault/config.yaml" }
    }

    func run(_ context: Context) throws -> ExitCode {
        guard let path = config ?? Self.defaultPath(context.environment) else {
            throw CLIError(message: "cannot tell where the config file is: HOME is not set", hints: ["give it with --config FILE"], code: .usage)
        }
        let p = try Self.load(path, profile: profile)
        if ifDue, try !due(p, path, context) { return .ok }
        let home = context.environment.nonEmpty("HOME")
        func expand(_ word: String) -> String { word == "~" ? home ?? word : word.hasPrefix("~/") ? (home.map { $0 + word.dropFirst() } ?? word) : word }
        guard case .run(let command, _) = try ArgumentParser.parse(["backup"] + p.backupArguments.map(expand)),
              let backup = command as? BackupCommand else {
            throw CLIError(message: "\(path): profile '\(profile)' is not a backup", code: .usage)
        }
        let directory = try p.vault.map { try VaultLocation.resolve(option: expand($0), environment: context.environment) } ?? context.vaultDirectory
        // The profile's way to unlock (for keep:), unless the command line gave one.
        var globals = context.globals
        if globals.passwordFile == nil && globals.passwordCommand == nil && globals.keyFile == nil {
            globals.passwordFile = p.passwordFile.map(expand)
            globals.passwordCommand = p.passwordCommand
            globals.keyFile = p.keyFile.map(expand)
        }
        globals.limitUpload = globals.limitUpload ?? p.limitUpload
        globals.limitDownload = globals.limitDownload ?? p.limitDownload
        let runContext = Context(terminal: context.terminal, environment: context.environment, globals: globals,
                                 vaultDirectory: directory, stateDirectory: context.stateDirectory)
        // One run of a profile at a time (a timer that fires while a long
        // run goes on, or a run by hand beside it).
        guard let lock = try ProfileRuns.lock(context.stateDirectory, profile: profile) else {
            // A tick while the run it started goes on: nothing to say.
            if ifDue { return .ok }
            throw CLIError(message: "profile '\(profile)' is running already", hints: ["'vault status' shows its last run"], code: .busy)
        }
        defer { withExtendedLifetime(lock) {} }
        let started = Syscall.now()
        var facts = ["VAULT_PROFILE": profile]
        defer {
            ProfileRuns.record(context.stateDirectory, profile: profile,
                               .init(start: started, end: Syscall.now(), code: Int32(facts["VAULT_EXIT_CODE"] ?? "") ?? ExitCode.failure.rawValue,
                                     snapshot: facts["VAULT_SNAPSHOT"]))
        }
        ping(p, "start", context)
        for hook in p.before {
            let status = try Self.hook(hook, facts)
            guard status == .exited(0) else {
                context.terminal.report(CLIError(message: "the before hook '\(Terminal.printable(hook))' \(Self.words(status)): the backup of '\(profile)' did not run"))
                facts["VAULT_EXIT_CODE"] = String(ExitCode.failure.rawValue)
                try finish(p, hooks: p.error, facts, code: .failure, context)
                throw ReportedError(.failure)
            }
        }
        let code: ExitCode
        do {
            let (c, summary) = try backup.perform(runContext)
            code = c
            if let s = summary, let id = s.snapshot {
                facts["VAULT_SNAPSHOT"] = id
                facts["VAULT_FILES"] = String(s.counts.files)
                facts["VAULT_BYTES"] = String(s.counts.bytes)
                facts["VAULT_BYTES_STORED"] = String(s.bytesStored)
            }
        } catch {
            let report = ErrorReport.cliError(for: error, vaultDirectory: directory)
            context.terminal.report(report)
            facts["VAULT_EXIT_CODE"] = String(report.code.rawValue)
            try finish(p, hooks: p.error, facts, code: report.code, context)
            throw ReportedError(report.code)
        }
        var final = code
        func worsen(_ c: ExitCode) { if c != .ok && (final == .ok || final == .partial) { final = c } }
        if facts["VAULT_SNAPSHOT"] != nil {
            // With keep: a remote that holds no vault yet (asked of it: its
            // header is not there) gets the first push before the prune,
            // which must see every remote's inbox; the push after the
            // prune is the one that also takes the forgotten away.
            if !p.forgetArguments.isEmpty {
                for remote in p.push where Self.holdsNoVault(remote, runContext) { worsen(push(remote, runContext)) }
            }
            if !p.forgetArguments.isEmpty, !forget(p, runContext) { worsen(.partial) }
            if let words = p.checkArguments {
                let last = ProfileRuns.read(.checked, context.stateDirectory, profile: profile)
                if p.checkEvery.map({ every in last.map { Syscall.now() - $0 >= every } ?? true }) ?? true {
                    let checked = check(words, runContext)
                    if checked == .ok { ProfileRuns.write(.checked, context.stateDirectory, profile: profile, at: Syscall.now()) }
                    worsen(checked)
                }
            }
            for remote in p.push { worsen(push(remote, runContext)) }
        }
        facts["VAULT_EXIT_CODE"] = String(final.rawValue)
        try finish(p, hooks: facts["VAULT_SNAPSHOT"] == nil || !(final == .ok || final == .partial) ? p.error : p.after, facts, code: final, context)
        return final
    }

    /// Whether a time of the schedule has come since the last run (or,
    /// never run, since `vault schedule` installed the crontab line).
    private func due(_ p: ConfigFile.Profile, _ path: String, _ context: Context) throws -> Bool {
        guard let when = p.schedule else {
            throw CLIError(message: "\(path): profiles.\(profile): no 'schedule:' for --if-due", code: .usage)
        }
        let calendar: CalendarSchedule
        do { calendar = try CalendarSchedule(parsing: when) } catch {
            guard case .unreadable(let why) = error else { throw error }
            throw CLIError(message: "\(path): profiles.\(profile).schedule: '\(Terminal.printable(when))' cannot run with --if-due: \(why)", code: .usage)
        }
        guard let time = calendar.latest(atOrBefore: Syscall.now()) else { return false }
        let since = ProfileRuns.last(context.stateDirectory, profile: profile)?.start ?? ProfileRuns.read(.since, context.stateDirectory, profile: profile)
        return since.map { $0 < time } ?? true
    }

    /// `keep:` after a backup: `snapshots forget --keep-... --host HOST
    /// --prune`, this profile's host only (never another machine's
    /// snapshots). It needs the password (the unlock agent, or a global
    /// --password-file or --password-command): without it, or if it fails,
    /// a warning, and the run exits 3, the backup made.
    private func forget(_ p: ConfigFile.Profile, _ context: Context) -> Bool {
        let words = ["snapshots", "forget"] + p.forgetArguments + ["--host", p.host ?? Syscall.hostName(), "--prune"]
        do {
            guard case .run(let command, _) = try ArgumentParser.parse(words) else { return false }
            let code = try command.run(context)
            return code == .ok
        } catch {
            context.terminal.warning("the backup is made, but forgetting old snapshots failed: \(ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory).message)",
                                     hints: ["it needs the password: keep the unlock agent running ('vault unlock'), or give --password-file"])
            return false
        }
    }

    /// Whether the remote answers that it has no vault header; false when
    /// it cannot be asked (the push says why).
    static func holdsNoVault(_ name: String, _ context: Context) -> Bool {
        do {
            let remote = try context.remote(name)
            return try context.rclone().fetch(RemoteNames.join(remote.target, RemoteNames.header), limit: VaultHeader.maxLength + 1) == nil
        } catch {
            return false
        }
    }

    /// `check:` after the backup and forget: `vault check WORDS`, which
    /// needs the password as forget does. Damage found is the run's result
    /// (check's exit code), so the pings and the error hooks tell of it.
    private func check(_ words: [String], _ context: Context) -> ExitCode {
        do {
            guard case .run(let command, _) = try ArgumentParser.parse(["check"] + words) else { return .usage }
            return try command.run(context)
        } catch {
            let report = ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory)
            context.terminal.report(CLIError(message: "the backup is made, but the check failed: \(report.message)", hints: report.hints, code: report.code))
            return report.code
        }
    }

    /// `push:` after the backup (and forget): `vault push REMOTE`, which
    /// needs no password. A push that fails is the run's failure (its exit
    /// code): the off-site copy is what the profile was for.
    private func push(_ remote: String, _ context: Context) -> ExitCode {
        do {
            guard case .run(let command, _) = try ArgumentParser.parse(["push", "--", remote]) else { return .usage }
            return try command.run(context)
        } catch {
            let report = ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory)
            context.terminal.report(CLIError(message: "the backup is made, but the push to '\(Terminal.printable(remote))' failed: \(report.message)",
                                             hints: report.hints, code: report.code))
            return report.code
        }
    }

    /// The after or error hooks, then the end ping. A hook that fails is
    /// named (a warning): the backup's own result stands.
    private func finish(_ p: ConfigFile.Profile, hooks: [String], _ facts: [String: String], code: ExitCode, _ context: Context) throws {
        for hook in hooks {
            let status = try Self.hook(hook, facts)
            if status != .exited(0) { context.terminal.warning("the hook '\(Terminal.printable(hook))' \(Self.words(status))") }
        }
        ping(p, String(code.rawValue), context)
        if let url = p.notify, code != .ok || !p.notifyFailuresOnly {
            let what = facts["VAULT_SNAPSHOT"].map { "snapshot \($0.prefix(8)) of \(facts["VAULT_FILES"] ?? "?") files" } ?? "no snapshot"
            let text = "backup of '\(profile)' on \(Syscall.hostName()) ended with exit \(code.rawValue): \(what)"
            let headers = ["Title: vault " + (code == .ok ? "backup done" : "backup failed")] + (code == .ok ? [] : ["Priority: high", "Tags: warning"])
            if let problem = HTTPPing.post(url, body: text, headers: headers) {
                context.terminal.warning("could not notify \(Terminal.printable(url)): \(problem)")
            }
        }
    }

    private func ping(_ p: ConfigFile.Profile, _ suffix: String, _ context: Context) {
        guard let url = p.ping else { return }
        let full = (url.hasSuffix("/") ? url : url + "/") + suffix
        if let problem = HTTPPing.get(full) { context.terminal.warning("could not ping \(Terminal.printable(full)): \(problem)") }
    }

    /// Runs one hook with /bin/sh, `facts` in its environment, and waits
    /// (standard input /dev/null, output and errors ours).
    static func hook(_ command: String, _ facts: [String: String]) throws -> Termination {
        try Syscall.wait(try Syscall.spawn("/bin/sh", arguments: ["-c", command], stdout: 1, stderr: 2, environment: facts))
    }

    static func words(_ t: Termination) -> String {
        switch t {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "was killed by signal \(signal)"
        }
    }

    /// The profile, or a one-line error naming the file, line and key (exit 2).
    static func load(_ path: String, profile: String) throws -> ConfigFile.Profile {
        let bytes = try readConfig(path)
        do { return try ConfigFile(parsing: bytes).profile(profile) } catch {
            throw CLIError(message: Self.words(error, path: path), code: .usage)
        }
    }

    /// The config file's bytes. Its hooks are commands this user runs: a
    /// file another user may write (group or others, or owned by someone
    /// else but root) is refused, as ssh refuses such a config.
    static func readConfig(_ path: String) throws -> [UInt8] {
        let file = try FileHandleFD.regularFile(path, what: .configFile)
        let st = try Syscall.status(file.fd)
        guard !st.isWritableByOthers, st.owner == Syscall.userID || st.owner == 0 else {
            throw CLIError(message: "\(path): others may write it, and its hooks are commands run as you: not read",
                           hints: ["chmod go-w '\(path)'"], code: .usage)
        }
        return try file.readAll(limit: YAMLNode.maxLength + 1)
    }

    static func words(_ e: ConfigError, path: String) -> String {
        let place = e.line > 0 ? "\(path):\(e.line)" : path
        let key = e.key.map { Terminal.printable($0) + ": " } ?? ""
        let problem: String
        switch e.problem {
        case .syntax(let what): problem = "not YAML (\(what))"
        case .tooLarge: problem = "larger than 1 MiB"
        case .moreThanOneDocument: problem = "more than one YAML document"
        case .nestedTooDeep: problem = "nested more than \(YAMLNode.maxDepth) levels"
        case .alias: problem = "a YAML alias (*name): not accepted here"
        case .keyNotText: problem = "a key that is not plain text"
        case .duplicateKey: problem = "given twice"
        case .unknownKey(let known): problem = "unknown key (known: \(known.joined(separator: ", ")))"
        case .wrongType(let expected): problem = "should be \(expected)"
        case .invalidValue(let what): problem = what
        case .noProfiles: problem = "no profiles (a 'profiles:' mapping of names)"
        case .noSuchProfile(let known): problem = "no such profile (there: \(known.joined(separator: ", ")))"
        }
        return "\(place): \(key)\(problem)"
    }
}

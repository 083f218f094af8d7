import Foundation
import System
import VaultConfig
import VaultCore

/// `vault schedule PROFILE`: the profile's timer, as systemd user units
/// (a oneshot service that runs `vault run PROFILE`, and a timer with
/// Persistent=true, so a machine that was off catches up, and a
/// randomized delay), or, on a machine without systemd, a crontab line
/// (Crontab); `--remove` takes them away, `--list` shows them.
struct ScheduleCommand: Command {
    static let name = "schedule"
    static let abstract = "install, list or remove a profile's timer (systemd or cron)"
    static let configOption = RunCommand.configOption
    static let removeFlag = FlagOption("--remove")
    static let listFlag = FlagOption("--list")
    static let viaOption = ValueOption<String>.text("--via", as: "KIND")
    static let options = [configOption.spec, removeFlag.spec, listFlag.spec, viaOption.spec]
    static let help = """
        Usage: vault schedule PROFILE [--config FILE] [--via systemd|cron]
               vault schedule PROFILE --remove
               vault schedule --list

        Installs the timer of a profile of the config file (see 'vault run'),
        from its 'schedule:' key, a systemd calendar ('daily', '*-*-* 02:00',
        'Mon..Fri 19:30'). Where systemd runs, two systemd user units in
        $XDG_CONFIG_HOME/systemd/user (else ~/.config/systemd/user),
        vault-PROFILE.service, which runs 'vault run PROFILE' at low
        priority, and vault-PROFILE.timer, with Persistent=true (a run missed
        while the machine was off happens at the next boot) and a random
        delay of up to 10 minutes. Then it asks systemctl --user to enable
        the timer; where that cannot be done (no user session), it says what
        to run. Without systemd, a line in your crontab that every 10
        minutes runs 'vault run PROFILE --if-due', which backs up only when
        a time of the schedule has come since the last run (so a machine
        that was off catches up); there the calendar takes weekdays, dates
        and times, without years, seconds, '~' or a time zone. Two runs of
        one profile never overlap: 'vault run' holds a lock. 'vault status'
        shows the last run and the next.

        Options:
          --config FILE   another config file
          --via KIND      systemd or cron (default: systemd where it runs,
                          else cron where there is a crontab)
          --remove        stop and remove the profile's timer (both kinds)
          --list          the timers installed

        Examples:
          vault schedule home
          vault schedule --list
          vault schedule home --remove
        """

    let profile: String?
    let config: String?
    let remove: Bool
    let list: Bool
    let viaCron: Bool?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        list = arguments.isSet(Self.listFlag)
        remove = arguments.isSet(Self.removeFlag)
        config = try arguments.value(Self.configOption)
        profile = list ? nil : try arguments.exactly("PROFILE")[0]
        switch try arguments.value(Self.viaOption) {
        case nil: viaCron = nil
        case "systemd": viaCron = false
        case "cron": viaCron = true
        case let other?: throw arguments.usageError("--via is systemd or cron, not '\(Terminal.printable(other))'")
        }
        if list && (remove || config != nil || viaCron != nil || !arguments.positionals.isEmpty) { throw arguments.usageError("--list goes alone") }
        if remove && viaCron != nil { throw arguments.usageError("--remove takes away both kinds: no --via") }
    }

    /// systemd where it is the running init (its own test, sd_booted(3)),
    /// else cron where there is a crontab, else systemd (units written, and
    /// the user told how to start them).
    static var systemdRuns: Bool { Syscall.exists("/run/systemd/system") }

    static func unitDirectory(_ environment: [String: String]) -> String? {
        VaultLocation.configHome(environment).map { $0 + "/systemd/user" }
    }

    func run(_ context: Context) throws -> ExitCode {
        guard let units = Self.unitDirectory(context.environment) else {
            throw CLIError(message: "cannot tell where systemd user units go: HOME is not set", code: .usage)
        }
        if list {
            let names = ((try? VaultDirectory.names(in: units)) ?? []).filter { $0.hasPrefix("vault-") && $0.hasSuffix(".timer") }.sorted()
            for name in names {
                let text = String(decoding: (try? VaultDirectory.readFile(units + "/" + name, limit: 64 << 10)) ?? [], as: UTF8.self)
                let when = text.split(separator: "\n").first { $0.hasPrefix("OnCalendar=") }.map { String($0.dropFirst(11)) } ?? "?"
                try context.terminal.printLine("\(name.dropFirst(6).dropLast(6))  \(Terminal.printable(when))")
            }
            let cron = Crontab.available ? try cronLines().compactMap(Crontab.entry) : []
            for (name, when) in cron.sorted(by: { $0.profile < $1.profile }) {
                try context.terminal.printLine("\(Terminal.printable(name))  \(Terminal.printable(when))  (crontab)")
            }
            if names.isEmpty && cron.isEmpty { context.terminal.note("no profile has a timer here") }
            return .ok
        }
        guard let profile else { return .usage }
        let service = units + "/vault-\(profile).service", timer = units + "/vault-\(profile).timer"
        if remove {
            _ = Self.systemctl(["disable", "--now", "vault-\(profile).timer"])
            var removed = 0
            for path in [timer, service] where try Syscall.status(of: path) != nil { try Syscall.unlink(path); removed += 1 }
            _ = Self.systemctl(["daemon-reload"])
            if Crontab.available {
                let lines = try cronLines()
                let kept = lines.filter { Crontab.entry($0)?.profile != profile }
                if kept.count != lines.count {
                    try installCron(kept, context)
                    removed += 1
                }
            }
            guard removed > 0 else { throw CLIError(message: "profile '\(profile)' has no timer here", code: .noSuchItem) }
            context.terminal.note("removed the timer of '\(profile)'")
            return .ok
        }
        guard let path = config ?? RunCommand.defaultPath(context.environment) else {
            throw CLIError(message: "cannot tell where the config file is: HOME is not set", code: .usage)
        }
        let p = try RunCommand.load(path, profile: profile)
        guard let when = p.schedule else {
            throw CLIError(message: "\(path): profiles.\(profile): no 'schedule:' (a systemd calendar, such as '*-*-* 02:00')", code: .usage)
        }
        let binary = String(decoding: try Syscall.readLink(FilePath("/proc/self/exe")), as: UTF8.self)
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        if viaCron ?? (!Self.systemdRuns && Crontab.available) {
            return try scheduleCron(profile, when, binary: binary, config: absolute, path: path, context)
        }
        if let next = StatusCommand.elapses(when), next.isEmpty {
            throw CLIError(message: "\(path): profiles.\(profile).schedule: '\(Terminal.printable(when))' is not a systemd calendar", code: .usage)
        }
        try Vault.ensureDirectory(units)
        try VaultDirectory.atomicWrite(Array("""
            [Unit]
            Description=vault backup profile \(profile)

            [Service]
            Type=oneshot
            ExecStart=\(Self.quoted(binary)) run \(profile) --config \(Self.quoted(absolute))
            Nice=10
            IOSchedulingClass=idle

            """.utf8), to: service, mode: 0o644)
        try VaultDirectory.atomicWrite(Array("""
            [Unit]
            Description=vault backup profile \(profile), on its schedule

            [Timer]
            OnCalendar=\(when)
            Persistent=true
            RandomizedDelaySec=10min

            [Install]
            WantedBy=timers.target

            """.utf8), to: timer, mode: 0o644)
        let enabled = Self.systemctl(["daemon-reload"]) && Self.systemctl(["enable", "--now", "vault-\(profile).timer"])
        let next = StatusCommand.elapses(when)?.first.map { ", next " + Format.stamp($0) } ?? ""
        if enabled {
            context.terminal.note("'\(profile)' runs on its schedule (\(Terminal.printable(when))\(next)): vault-\(profile).timer")
        } else {
            context.terminal.note("wrote vault-\(profile).service and vault-\(profile).timer in \(Terminal.printable(units)); systemctl --user could not enable the timer here",
                                  hint: "in your login session: systemctl --user daemon-reload && systemctl --user enable --now vault-\(profile).timer (and 'loginctl enable-linger' to run while logged out)")
        }
        return .ok
    }

    /// The crontab line of `profile`, replacing one it had; the time it was
    /// installed is kept so that `--if-due` does not run at once for a time
    /// that passed before there was a schedule.
    private func scheduleCron(_ profile: String, _ when: String, binary: String, config: String, path: String, _ context: Context) throws -> ExitCode {
        let calendar: CalendarSchedule
        do { calendar = try CalendarSchedule(parsing: when) } catch {
            guard case .unreadable(let why) = error else { throw error }
            throw CLIError(message: "\(path): profiles.\(profile).schedule: '\(Terminal.printable(when))' cannot run from cron: \(why)", code: .usage)
        }
        guard Crontab.available else {
            throw CLIError(message: "there is no crontab command here", hints: ["install cron, or use --via systemd"], code: .usage)
        }
        let line = Crontab.line(binary: binary, profile: profile, config: config, calendar: when)
        let kept = try cronLines().filter { Crontab.entry($0)?.profile != profile }
        ProfileRuns.write(.since, context.stateDirectory, profile: profile, at: Syscall.now())
        try installCron(kept + [line], context)
        let next = calendar.next(after: Syscall.now()).map { ", next " + Format.stamp($0) } ?? ""
        context.terminal.note("'\(profile)' runs on its schedule (\(Terminal.printable(when))\(next)): a line in your crontab checks every 10 minutes")
        return .ok
    }

    private func cronLines() throws -> [String] {
        do { return try Crontab.lines() } catch {
            guard case .unreadable(let why) = error else { throw error }
            throw CLIError(message: "cannot read your crontab: \(Terminal.printable(why))", code: .failure)
        }
    }

    private func installCron(_ lines: [String], _ context: Context) throws {
        do { try Crontab.install(lines, scratch: ProfileRuns.directory(context.stateDirectory)) } catch let failure as Crontab.Failure {
            guard case .notInstalled(let why) = failure else { throw failure }
            throw CLIError(message: "crontab refused the new lines: \(Terminal.printable(why))", code: .failure)
        }
    }

    /// A word of a unit file's command line, quoted as systemd reads it
    /// ("%" is a specifier there: doubled).
    static func quoted(_ word: String) -> String {
        "\"" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "%", with: "%%") + "\""
    }

    /// `systemctl --user ARGS`; whether it exited 0 (false when there is no systemctl).
    static func systemctl(_ args: [String]) -> Bool {
        guard Syscall.exists("/usr/bin/systemctl") || Syscall.exists("/bin/systemctl") else { return false }
        let words = (["systemctl", "--user"] + args).joined(separator: " ")
        // A failure is answered by the caller's note; the units stay written.
        guard let pid = try? Syscall.spawnShell(words + " >/dev/null 2>&1", arguments: [], directory: nil) else { return false }
        return (try? Syscall.wait(pid)) == .exited(0)
    }
}

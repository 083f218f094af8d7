import Foundation
import System
import VaultConfig
import VaultCore

/// `vault schedule PROFILE`: the profile's timer, as systemd user units
/// (a oneshot service that runs `vault run PROFILE`, and a timer with
/// Persistent=true, so a machine that was off catches up, and a
/// randomized delay); `--remove` takes them away, `--list` shows them.
struct ScheduleCommand: Command {
    static let name = "schedule"
    static let abstract = "install, list or remove a profile's timer (systemd user units)"
    static let configOption = RunCommand.configOption
    static let removeFlag = FlagOption("--remove")
    static let listFlag = FlagOption("--list")
    static let options = [configOption.spec, removeFlag.spec, listFlag.spec]
    static let help = """
        Usage: vault schedule PROFILE [--config FILE] [--remove]
               vault schedule --list

        Installs the timer of a profile of the config file (see 'vault run'),
        from its 'schedule:' key, a systemd calendar ('daily', '*-*-* 02:00',
        'Mon..Fri 19:30'): two systemd user units in
        $XDG_CONFIG_HOME/systemd/user (else ~/.config/systemd/user),
        vault-PROFILE.service, which runs 'vault run PROFILE' at low
        priority, and vault-PROFILE.timer, with Persistent=true (a run missed
        while the machine was off happens at the next boot) and a random
        delay of up to 10 minutes. Then it asks systemctl --user to enable
        the timer; where that cannot be done (no user session), it says what
        to run. Two runs of one profile never overlap: 'vault run' holds a
        lock. 'vault status' shows the last run and the next.

        Options:
          --config FILE   another config file
          --remove        stop and remove the profile's timer
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

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        list = arguments.isSet(Self.listFlag)
        remove = arguments.isSet(Self.removeFlag)
        config = try arguments.value(Self.configOption)
        profile = list ? nil : try arguments.exactly("PROFILE")[0]
        if list && (remove || config != nil || !arguments.positionals.isEmpty) { throw arguments.usageError("--list goes alone") }
    }

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
            if names.isEmpty { context.terminal.note("no profile has a timer here") }
            return .ok
        }
        guard let profile else { return .usage }
        let service = units + "/vault-\(profile).service", timer = units + "/vault-\(profile).timer"
        if remove {
            _ = Self.systemctl(["disable", "--now", "vault-\(profile).timer"])
            var removed = 0
            for path in [timer, service] where try Syscall.status(of: path) != nil { try Syscall.unlink(path); removed += 1 }
            _ = Self.systemctl(["daemon-reload"])
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
        if let next = StatusCommand.elapses(when), next.isEmpty {
            throw CLIError(message: "\(path): profiles.\(profile).schedule: '\(Terminal.printable(when))' is not a systemd calendar", code: .usage)
        }
        let binary = try Syscall.readLink(FilePath("/proc/self/exe"))
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        try Vault.ensureDirectory(units)
        try VaultDirectory.atomicWrite(Array("""
            [Unit]
            Description=vault backup profile \(profile)

            [Service]
            Type=oneshot
            ExecStart=\(Self.quoted(String(decoding: binary, as: UTF8.self))) run \(profile) --config \(Self.quoted(absolute))
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

import System
import VaultAgent
import VaultCore

/// `vault unlock`: starts this vault's unlock agent, or says how long it has left.
struct UnlockCommand: Command {
    static let name = "unlock"
    static let abstract = "keep the vault unlocked for a while (an agent holds the key)"
    static let forOption = ValueOption<UInt32>(spec: .value("--for", as: "TIME")) { text, option, command throws(CLIError) in
        guard let seconds = Self.seconds(text) else {
            throw .usage("option '\(option)' needs a time such as 90s, 15m, 2h, 1h30m or 1d, not '\(text)'", command: command)
        }
        guard seconds <= AgentSetup.longestLimit else { throw .usage("an unlock lasts at most 7 days (7d)", command: command) }
        return seconds
    }
    static let idleFlag = FlagOption("--idle")
    static let statusFlag = FlagOption("--status")
    static let options = [forOption.spec, idleFlag.spec, statusFlag.spec]
    /// 15 minutes, as sudo's and KeePassXC's defaults are of that order.
    static let defaultLimit: UInt32 = 15 * 60
    static let help = """
        Usage: vault unlock [--for TIME] [--idle]
               vault unlock --status

        Asks for the password once and starts an agent: a process of yours
        that holds this vault's master key in locked memory and gives it to
        your vault commands (list, get, open, restore, rename, remove, forget,
        check, mount, pull), so they ask for no password while it runs. It
        ends after TIME (default 15m), at 'vault lock', on SIGTERM, when the
        vault is rekeyed, at logout (when $XDG_RUNTIME_DIR goes) and at
        shutdown. Time spent asleep counts.

        Commands that change how the vault opens (passwd, key add, key remove,
        rekey, upgrade, kit export), and move send, which erases the vault
        here, still ask for the password (or --key-file): holding the vault
        open does not hand over its locks, nor the vault. A password given with
        --password-file, --password-command or --key-file, or a --slot, is
        used instead of the agent.

        The agent listens on a socket in $XDG_RUNTIME_DIR/vault (0700; without
        XDG_RUNTIME_DIR, /run/user/UID/vault or else /dev/shm/vault-agent-UID), which
        only you can reach; both ends check the other is you. Anything that
        runs as you can use it while it runs, as with ssh-agent: see
        SECURITY.md.

        Options:
          --for TIME   how long: 90s, 15m, 2h, 1h30m, 1d (at most 7d; default 15m)
          --idle       count TIME from the last use instead of from now
          --status     say whether the vault is unlocked and for how long;
                       exit 0 if it is, 1 if not

        Examples:
          vault unlock
          vault unlock --for 2h --idle
          vault unlock --status
          vault lock
        """

    let limit: UInt32
    let idle: Bool
    let status: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        let given = try arguments.value(Self.forOption)
        idle = arguments.isSet(Self.idleFlag)
        status = arguments.isSet(Self.statusFlag)
        if status && (given != nil || idle) { throw arguments.usageError("--status takes no other option") }
        limit = given ?? Self.defaultLimit
    }

    /// "90s", "15m", "2h", "1d", or several in a row ("1h30m"); nil for
    /// anything else, zero, or past UInt32.
    static func seconds(_ text: String) -> UInt32? {
        var total: UInt64 = 0, number: UInt64?
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let n = (number ?? 0) * 10 + UInt64(c - UInt8(ascii: "0"))
                guard n < 1 << 32 else { return nil }
                number = n
            default:
                let unit: UInt64
                switch c {
                case UInt8(ascii: "s"): unit = 1
                case UInt8(ascii: "m"): unit = 60
                case UInt8(ascii: "h"): unit = 3600
                case UInt8(ascii: "d"): unit = 86_400
                default: return nil
                }
                guard let n = number else { return nil }
                total += n * unit
                guard total < 1 << 32 else { return nil }
                number = nil
            }
        }
        guard number == nil, total > 0 else { return nil }
        return UInt32(total)
    }

    func run(_ context: Context) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        let id = vault.header.vaultID
        if status {
            guard let running = try AgentClient.status(vaultID: id, environment: context.environment) else {
                try context.terminal.printLine("locked: no unlock agent runs for this vault")
                return .failure
            }
            try context.terminal.printLine("unlocked: " + Self.describe(running))
            return .ok
        }
        guard AgentDirectory.location(environment: context.environment) != nil else { throw AgentError.noRuntimeDirectory }
        if let running = try AgentClient.status(vaultID: id, environment: context.environment) {
            context.terminal.note("already unlocked: " + Self.describe(running), hint: "'vault lock' ends it; then unlock again for another time")
            return .ok
        }
        let password = try context.passwordSource()
        let unlocked = try context.open(vault, password, forWriting: false, agent: false)
        try AgentLauncher.start(executable: "/proc/self/exe", name: Terminal.program, arguments: [AgentMode.argument],
                                setup: AgentSetup(vaultID: id, limit: limit, idle: idle, key: unlocked.masterKey.secret))
        let when = Format.duration(limit)
        context.terminal.note(idle ? "unlocked; locks after \(when) without use" : "unlocked for \(when), until \(Format.time(Syscall.now() + Int64(limit)))",
                              hint: "'vault lock' locks it now")
        return .ok
    }

    /// "locks in 14 min 32 s (at 15:42)", or with --idle "locks after 15 min without use (in 14 min 32 s)".
    static func describe(_ s: AgentStatus) -> String {
        let left = Format.duration(s.secondsLeft)
        return s.idle ? "locks after \(Format.duration(s.limit)) without use (in \(left) if unused)"
            : "locks in \(left) (at \(Format.time(Syscall.now() + Int64(s.secondsLeft))))"
    }
}

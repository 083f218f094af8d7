/// One subcommand, shaped like swift-argument-parser's: typed fields from
/// `init(parsing:)`, `validate` before any I/O, then `run`.
protocol Command: Sendable {
    /// The word that selects it: `vault <name>`.
    static var name: String { get }
    /// One line for the command list in `vault --help`.
    static var abstract: String { get }
    /// The `vault <name> --help` page, hand-written: usage, what it does,
    /// options, examples. `Help.page` adds the common footer.
    static var help: String { get }
    /// This command's own options; the global ones are always accepted too.
    static var options: [OptionSpec] { get }

    /// Typed fields from the parsed words. Usage errors only; no I/O.
    init(parsing arguments: ParsedArguments) throws(CLIError)
    /// Checks that need the environment but no I/O (VAULT_ALLOW_WEAK_KDF).
    func validate(environment: [String: String]) throws(CLIError)
    /// Does the work: returns .ok or .partial; every failure throws (a
    /// CLIError, or a library error that `ErrorReport` translates).
    func run(_ context: Context) throws -> ExitCode
}

extension Command {
    static var options: [OptionSpec] { [] }
    func validate(environment: [String: String]) throws(CLIError) {}
}

enum Commands {
    /// In the order `vault --help` lists them.
    static let all: [any Command.Type] = [
        InitCommand.self, AddCommand.self, ListCommand.self, InfoCommand.self, GetCommand.self,
        RestoreCommand.self, RemoveCommand.self, ForgetCommand.self, RenameCommand.self, PasswdCommand.self, CheckCommand.self,
        OpenCommand.self, RekeyCommand.self, KitCommand.self, MoveCommand.self, MountCommand.self,
        RemoteCommand.self, PushCommand.self, PullCommand.self, CloneCommand.self, ShareCommand.self,
        KeyCommand.self, UpgradeCommand.self, UnlockCommand.self, LockCommand.self, BackupCommand.self, SnapshotsCommand.self,
        ThinCommand.self, RunCommand.self, ScheduleCommand.self, StatusCommand.self,
    ]

    /// The words people type from habit (`ls`, `rm`, `mv`, `cat`), each
    /// for the command that does what they expect of it.
    static let aliases: [String: any Command.Type] = [
        "ls": ListCommand.self, "rm": RemoveCommand.self, "mv": RenameCommand.self, "cat": GetCommand.self,
    ]

    static func named(_ name: String) -> (any Command.Type)? { all.first { $0.name == name } ?? aliases[name] }

    /// The command a mistyped word most likely meant ("lsit": "list"):
    /// the closest name within two edits, if there is one.
    static func suggestion(for word: String) -> String? {
        let candidates = all.map { $0.name } + ["help"]
        let scored = candidates.map { ($0, editDistance(Array(word.lowercased().utf8), Array($0.utf8))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2, best.1 < best.0.count else { return nil }
        return best.0
    }

    /// Levenshtein distance with transpositions counted as one edit
    /// (optimal string alignment), so "lsit" is one step from "list".
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}

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
        RestoreCommand.self, RemoveCommand.self, RenameCommand.self, PasswdCommand.self, CheckCommand.self,
        OpenCommand.self, RekeyCommand.self, KitCommand.self, MoveCommand.self, KeyCommand.self, UpgradeCommand.self,
    ]

    static func named(_ name: String) -> (any Command.Type)? { all.first { $0.name == name } }
}

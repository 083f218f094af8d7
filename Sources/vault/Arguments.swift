// The hand-written command-line parser. Grammar:
//
//   vault [GLOBAL...] COMMAND [GLOBAL | OPTION | ARG]... [-- ARG...]
//
// Global options may come before or after the command; a command's own
// options only after it. `--opt VALUE` and `--opt=VALUE` are the same; an
// option's value is the next word whatever it looks like, so file names that
// start with '-' work. `--` ends options. `-` is an ordinary argument (stdin
// or stdout, by the command's choice). `--help` wins over any other mistake
// on the line, so `vault get --help` works before `get` has its NAME.

/// One option: its spellings (the first is canonical) and, if it takes a
/// value, the value's name as help shows it.
struct OptionSpec: Sendable {
    let names: [String]
    let valueName: String?
    /// `--opt` alone or `--opt=VALUE` (never a separate word), as `--compress[=LEVEL]`.
    var valueIsOptional = false
    /// May be given more than once (`backup --exclude`); `values(_:)` has them all.
    var repeatable = false

    var canonical: String { names[0] }

    static func flag(_ names: String...) -> OptionSpec { OptionSpec(names: names, valueName: nil) }
    static func value(_ names: String..., as valueName: String) -> OptionSpec { OptionSpec(names: names, valueName: valueName) }
    static func optionalValue(_ name: String, as valueName: String) -> OptionSpec {
        OptionSpec(names: [name], valueName: valueName, valueIsOptional: true)
    }
}

/// A command's option that takes a value, typed by what the value becomes:
/// commands declare each once, list its `spec` in `options`, and read it
/// with `ParsedArguments.value(_:)`, so no option is named by a string twice.
struct ValueOption<Value: Sendable>: Sendable {
    let spec: OptionSpec
    let convert: @Sendable (String, _ option: String, _ command: String) throws(CLIError) -> Value

    /// The value as given (a path, a name, a command).
    static func text(_ names: String..., as valueName: String) -> ValueOption<String> {
        ValueOption<String>(spec: OptionSpec(names: names, valueName: valueName)) { text, _, _ throws(CLIError) in text }
    }

    /// A value that may be given more than once (read with `values(_:)`).
    static func repeated(_ names: String..., as valueName: String) -> ValueOption<String> {
        var spec = OptionSpec(names: names, valueName: valueName)
        spec.repeatable = true
        return ValueOption<String>(spec: spec) { text, _, _ throws(CLIError) in text }
    }

    /// A whole number.
    static func number(_ names: String..., as valueName: String) -> ValueOption<UInt32> {
        ValueOption<UInt32>(spec: OptionSpec(names: names, valueName: valueName)) { text, option, command throws(CLIError) in
            guard let n = UInt32(text) else { throw .usage("option '\(option)' needs a whole number, not '\(text)'", command: command) }
            return n
        }
    }
}

extension ValueOption where Value == UInt64 {
    /// A size in bytes: a whole number with an optional binary unit (K, M,
    /// G, T, also as KiB, MiB, GiB, TiB), as `--cache-size 2G`.
    static func byteSize(_ names: String..., as valueName: String) -> ValueOption<UInt64> {
        ValueOption<UInt64>(spec: OptionSpec(names: names, valueName: valueName)) { text, option, command throws(CLIError) in
            guard let n = ByteSizeText.parse(text) else {
                throw .usage("option '\(option)' needs a size such as 512M or 2G, not '\(text)'", command: command)
            }
            return n
        }
    }
}

enum ByteSizeText {
    static func parse(_ text: String) -> UInt64? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let n = UInt64(digits) else { return nil }
        let shift: UInt64
        switch text.dropFirst(digits.count).uppercased() {
        case "", "B": shift = 0
        case "K", "KIB": shift = 10
        case "M", "MIB": shift = 20
        case "G", "GIB": shift = 30
        case "T", "TIB": shift = 40
        default: return nil
        }
        guard n <= UInt64.max >> shift else { return nil }
        return n << shift
    }
}

/// An option given alone or with `=VALUE` (never a separate word), as
/// `--compress[=LEVEL]`.
struct OptionalValueOption: Sendable {
    let spec: OptionSpec
    init(_ name: String, as valueName: String) { spec = .optionalValue(name, as: valueName) }
}

/// A command's option without a value.
struct FlagOption: Sendable {
    let spec: OptionSpec
    init(_ names: String...) { spec = OptionSpec(names: names, valueName: nil) }
}

/// Options valid before or after any command.
struct GlobalOptions: Equatable, Sendable {
    var vault: String?
    var passwordFile: String?
    var passwordCommand: String?
    /// Unlock through a key-file slot instead of a password.
    var keyFile: String?
    /// Try only this password slot when unlocking.
    var slot: String?
    var quiet = false
    var acceptRollback = false
    var allowWeakPassword = false
    /// rclone's bandwidth limits, KiB/s (restic's global flags of the same names).
    var limitUpload: Int?
    var limitDownload: Int?

    static let specs: [OptionSpec] = [
        .value("--vault", as: "DIR"),
        .value("--password-file", as: "FILE"),
        .value("--password-command", as: "CMD"),
        .value("--key-file", as: "FILE"),
        .value("--slot", as: "NAME"),
        .flag("--quiet", "-q"),
        .flag("--accept-rollback"),
        .flag("--allow-weak-password"),
        .value("--limit-upload", as: "KIB"),
        .value("--limit-download", as: "KIB"),
        .flag("--help", "-h"),
        .flag("--version", "-V"),
    ]
}

/// The words given to one command: its options (by canonical name) and its
/// positional arguments, in order. Commands turn these into typed fields.
struct ParsedArguments: Sendable {
    let command: String
    fileprivate(set) var values: [String: String] = [:]
    fileprivate(set) var flags: Set<String> = []
    /// Repeatable options' values, in the order given.
    fileprivate(set) var lists: [String: [String]] = [:]
    fileprivate(set) var positionals: [String] = []

    init(command: String) { self.command = command }


    /// A typed option's value, if given.
    func value<V>(_ option: ValueOption<V>) throws(CLIError) -> V? {
        guard let text = values[option.spec.canonical] else { return nil }
        return try option.convert(text, option.spec.canonical, command)
    }

    /// Whether a flag was given.
    /// Every value of a repeatable option, in order.
    func values(_ option: ValueOption<String>) -> [String] { lists[option.spec.canonical] ?? [] }

    func isSet(_ option: FlagOption) -> Bool { flags.contains(option.spec.canonical) }

    /// Whether an optional-value option was given, alone or with a value.
    func isSet(_ option: OptionalValueOption) -> Bool {
        flags.contains(option.spec.canonical) || values[option.spec.canonical] != nil
    }

    /// Its `=VALUE`, if one was given.
    func value(_ option: OptionalValueOption) -> String? { values[option.spec.canonical] }

    /// A usage error that points at this command's help.
    func usageError(_ message: String) -> CLIError { .usage(message, command: command) }

    /// The positionals, which must match `names` one for one ("NAME", "NEWNAME").
    func exactly(_ names: String...) throws(CLIError) -> [String] {
        if positionals.count < names.count { throw usageError("missing \(names[positionals.count])") }
        if positionals.count > names.count { throw usageError("unexpected argument '\(positionals[names.count])'") }
        return positionals
    }

    /// At most one positional (push and pull's optional REMOTE).
    func optional() throws(CLIError) -> String? {
        if positionals.count > 1 { throw usageError("unexpected argument '\(positionals[1])'") }
        return positionals.first
    }

    /// One or more positionals called `name` ("PATH", "NAME").
    func oneOrMore(_ name: String) throws(CLIError) -> [String] {
        if positionals.isEmpty { throw usageError("missing \(name)") }
        return positionals
    }
}

/// What the command line asks for.
enum Invocation {
    case help((any Command.Type)?)
    /// `vault` with no words at all: the short usage summary.
    case summary
    case version
    case run(any Command, GlobalOptions)
}

enum ArgumentParser {
    static func parse(_ arguments: [String]) throws(CLIError) -> Invocation {
        var scan = Scan()
        try scan.run(arguments)
        let commandName = scan.command?.name
        if scan.help { return .help(scan.command) }
        if let message = scan.firstError {
            var error = CLIError.usage(message, command: commandName)
            if let hint = scan.firstHint { error.hints.insert(hint, at: 0) }
            throw error
        }
        if scan.version { return .version }
        guard let type = scan.command, let parsed = scan.parsed else {
            // `vault` alone is someone finding their way: show the way.
            if arguments.isEmpty { return .summary }
            throw .usage("missing command", command: nil)
        }
        if scan.globals.passwordFile != nil && scan.globals.passwordCommand != nil {
            throw .usage("--password-file and --password-command cannot be used together", command: nil)
        }
        if scan.globals.keyFile != nil && (scan.globals.passwordFile != nil || scan.globals.passwordCommand != nil) {
            throw .usage("--key-file and a password option cannot be used together", command: nil)
        }
        if scan.globals.keyFile != nil && scan.globals.slot != nil {
            throw .usage("--slot picks a password slot; it cannot be used with --key-file", command: nil)
        }
        return .run(try type.init(parsing: parsed), scan.globals)
    }
}

/// One left-to-right pass over the words. Mistakes are recorded rather than
/// thrown so that a later `--help` still wins; only an unknown command stops
/// the scan, since nothing after it can be read without knowing its options.
private struct Scan {
    var globals = GlobalOptions()
    var command: (any Command.Type)?
    var parsed: ParsedArguments?
    var help = false
    /// `help` was the first word: the next one names the page.
    var helpWord = false
    var version = false
    var firstError: String?
    /// A hint to the first error ("did you mean '--sort'?").
    var firstHint: String?

    mutating func run(_ arguments: [String]) throws(CLIError) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                try positional(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            // "--name=value"; short options take their value as the next word only.
            var name = word, inlineValue: String?
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inlineValue = String(word[word.index(after: equals)...])
            }
            guard let spec = lookup(name) else {
                let owners = command == nil ? Commands.all.filter { $0.options.contains { $0.names.contains(name) } } : []
                if let owner = owners.first {
                    // Its value is not a command: skip it, or "unknown command 'FILE'" would hide the real mistake.
                    if inlineValue == nil, owner.options.first(where: { $0.names.contains(name) })?.valueName != nil,
                       !(owner.options.first { $0.names.contains(name) }?.valueIsOptional ?? false) {
                        index += 1
                    }
                    // With one owner, say where it goes ("vault --passphrase-file F kit recover").
                    fail("option '\(name)' must come after the command"
                         + (owners.count == 1 ? ": 'vault \(owner.name) ... \(name)'" : ""))
                } else {
                    fail("unknown option '\(name)'", hint: optionSuggestion(for: name).map { "did you mean '\($0)'?" })
                }
                continue
            }
            guard spec.valueName != nil else {
                if inlineValue != nil { fail("option '\(name)' takes no value") } else { setFlag(spec.canonical) }
                continue
            }
            if spec.valueIsOptional {
                if let inlineValue { setValue(spec.canonical, inlineValue, spelled: name) } else { setFlag(spec.canonical) }
                continue
            }
            var value = inlineValue
            if value == nil, index < arguments.count {
                value = arguments[index]
                index += 1
            }
            guard let value, !value.isEmpty else {
                fail("option '\(name)' needs a value")
                continue
            }
            if spec.repeatable {
                parsed?.lists[spec.canonical, default: []].append(value)
                continue
            }
            setValue(spec.canonical, value, spelled: name)
        }
    }

    /// The option a mistyped one most likely meant ("--sotr": "--sort",
    /// "--exclude-cache": "--exclude-caches"): the closest of this
    /// command's and the global ones, within two edits, as for commands.
    private func optionSuggestion(for name: String) -> String? {
        guard name.hasPrefix("--") else { return nil }
        let names = ((command?.options ?? []) + GlobalOptions.specs).flatMap(\.names).filter { $0.hasPrefix("--") }
        let scored = names.map { ($0, Commands.editDistance(Array(name.utf8), Array($0.utf8))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
        return best.0
    }

    private func lookup(_ name: String) -> OptionSpec? {
        // A command's own option shadows a global one of the same spelling
        // (`get --version N`; `vault --version` before a command still works).
        let specs = (command?.options ?? []) + GlobalOptions.specs
        return specs.first { $0.names.contains(name) }
    }

    private mutating func positional(_ word: String) throws(CLIError) {
        if parsed != nil {
            parsed!.positionals.append(word)
        } else if let type = Commands.named(word) {
            helpWord = false   // `vault help COMMAND` is `vault COMMAND --help` (help is set)
            command = type
            parsed = ParsedArguments(command: type.name)
        } else if word == "help" && !helpWord && command == nil {
            helpWord = true
            help = true
        } else {
            var error = CLIError.usage("unknown command '\(word)'", command: nil)
            if let guess = Commands.suggestion(for: word) { error.hints.insert("did you mean '\(guess)'?", at: 0) }
            throw error
        }
    }

    private mutating func setFlag(_ option: String) {
        switch option {
        case "--help": help = true
        case "--version": version = true
        case "--quiet": globals.quiet = true
        case "--accept-rollback": globals.acceptRollback = true
        case "--allow-weak-password": globals.allowWeakPassword = true
        default: parsed?.flags.insert(option)
        }
    }

    private mutating func setValue(_ option: String, _ value: String, spelled: String) {
        let previous: String?
        switch option {
        case "--vault": previous = globals.vault; globals.vault = value
        case "--password-file": previous = globals.passwordFile; globals.passwordFile = value
        case "--password-command": previous = globals.passwordCommand; globals.passwordCommand = value
        case "--key-file": previous = globals.keyFile; globals.keyFile = value
        case "--slot": previous = globals.slot; globals.slot = value
        case "--limit-upload", "--limit-download":
            // KiB/s as restic takes them: a whole number above 0, at most 1 TiB/s.
            guard let kib = Int(value), kib > 0, kib <= 1 << 30 else { fail("\(spelled) takes KiB/s: a whole number above 0, not '\(value)'"); return }
            if option == "--limit-upload" { previous = globals.limitUpload.map(String.init); globals.limitUpload = kib }
            else { previous = globals.limitDownload.map(String.init); globals.limitDownload = kib }
        default: previous = parsed?.values.updateValue(value, forKey: option)
        }
        // Last-one-wins would silently ignore one of two conflicting values.
        if previous != nil { fail("option '\(spelled)' given twice") }
    }

    private mutating func fail(_ message: String, hint: String? = nil) {
        if firstError == nil { (firstError, firstHint) = (message, hint) }
    }
}

// The vault command line. Order matters: the process is hardened and Ctrl-C
// handling installed before anything else runs or any thread starts; then
// parse, validate (no I/O), resolve the vault, run. Every message is printed
// by Terminal; every exit code comes from ExitCode.
import System
import VaultBackup
import VaultCore
import VaultCrypto

Interrupts.install()
ProcessHardening.apply(Terminal(quiet: false))
// Absorb takes in a backup that names repacked packs only over what their
// repacks kept, which only VaultBackup can read (SnapshotAdmission).
RepackedSnapshots.register()

func main(_ arguments: [String], environment: [String: String]) -> ExitCode {
    var terminal = Terminal(quiet: false)
    var vaultDirectory: String?
    // Once, at the end: only then is it known whether a key was held where
    // mlock failed (RLIMIT_MEMLOCK reached), which the kernel may swap.
    defer {
        if SecretBytes.unlockedRegions > 0 {
            terminal.warning("some keys were held in memory that could not be locked; they may have been swapped to disk",
                             hints: ["raise the locked-memory limit ('ulimit -l')"])
        }
    }
    do {
        switch try ArgumentParser.parse(Array(arguments.dropFirst())) {
        case .help(let command?):
            try terminal.printLine(Help.page(for: command))
        case .help(nil):
            try terminal.printLine(Help.text)
        case .summary:
            try terminal.printLine(Help.summary)
        case .version:
            try terminal.printLine("\(Terminal.program) \(Terminal.version)")
        case .run(let command, let globals):
            terminal = Terminal(quiet: globals.quiet)
            try command.validate(environment: environment)
            let directory = try VaultLocation.resolve(option: globals.vault, environment: environment)
            vaultDirectory = directory
            // Before anything else: erase plaintext an earlier, killed `vault open` left.
            for base in Scratch.bases(vaultRoot: directory, environment: environment) {
                let (n, failed) = Scratch.removeAbandoned(base: base)
                if n > 0 { terminal.note("erased \(n) private cop\(n == 1 ? "y" : "ies") left by an interrupted 'vault open'") }
                for path in failed { terminal.warning("could not erase '\(path)', a private copy left by an interrupted 'vault open'") }
            }
            let state = try VaultLocation.stateDirectory(environment: environment)
            let (erased, failed) = PartialOutputs(stateDirectory: state).eraseAbandoned()
            for path in erased { terminal.note("erased '\(path)', plaintext an interrupted vault command left") }
            for path in failed { terminal.warning("could not erase '\(path)', plaintext an interrupted vault command left") }
            let context = Context(terminal: terminal, environment: environment, globals: globals,
                                  vaultDirectory: directory, stateDirectory: state)
            defer { ThinSession.finish(terminal, environment: environment) }
            return try command.run(context)
        }
        return .ok
    } catch let error as ReportedError {
        return error.code
    } catch {
        let report = ErrorReport.cliError(for: error, vaultDirectory: vaultDirectory)
        if report.code != .brokenPipe { terminal.report(report) }
        return report.code
    }
}

CryptoLibraries.initializeForProcess()
if CommandLine.arguments.dropFirst() == [AgentMode.argument] {
    Syscall.exit(AgentMode.run(environment: Syscall.environment()))
}
Syscall.exit(main(CommandLine.arguments, environment: Syscall.environment()).rawValue)

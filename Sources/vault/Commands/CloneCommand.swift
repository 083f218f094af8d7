import System
import VaultCore
import VaultCrypto
import VaultRemote

/// `vault clone`: a remote copy to a new directory on this machine.
struct CloneCommand: Command {
    static let name = "clone"
    static let abstract = "make a vault here from an off-site copy"
    static let jsonFlag = FlagOption("--json")
    static let options = [jsonFlag.spec]
    static let help = """
        Usage: vault clone TARGET DIR [--json]

        Downloads the vault at TARGET (any rclone path) into DIR, which must
        not exist or be empty: a new laptop, a lost disk. Everything lands
        in a staging directory beside DIR; the vault there is unlocked with
        the password and every byte of every item is checked; only then is
        it renamed to DIR. A failure (a damaged item: exit 14) leaves
        nothing at DIR. The new vault knows TARGET as its remote 'origin'.

        Options:
          --json   one JSON summary on standard output

        Examples:
          vault clone s3:my-bucket/vault ~/.local/share/vault
          vault clone /mnt/usb/vault ~/vault-copy
        """

    let target: String
    let directory: String
    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = try arguments.exactly("TARGET", "DIR")
        guard let t = RemoteNames.normalizedTarget(words[0]) else {
            throw arguments.usageError("'\(words[0])' cannot be a remote target")
        }
        (target, directory) = (t, words[1])
        json = arguments.isSet(Self.jsonFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        if let st = try Syscall.status(of: directory), try st.kind != .directory || !Syscall.listDirectory(directory).isEmpty {
            throw CLIError(message: "'\(directory)' already exists and is not empty; clone never overwrites",
                           hints: ["give a new or empty directory"], code: .exists)
        }
        let source = try context.passwordSource()
        let rclone = try context.rclone()
        let staging = try StagingDirectory(beside: directory, purpose: "cloning")
        let stagingPath = staging.path
        let cleanup = Interrupts.register { _ = Eraser.erase(stagingPath) }
        defer { Interrupts.unregister(cleanup) }
        let meter = TransferMeter(context.terminal, "downloading")
        let summary = try { () throws -> FetchSummary in
            defer { meter.finish() }
            return try RemoteClone.download(target: target, rclone: rclone, into: staging, progress: meter.update)
        }()
        do {
            let vault = try Vault(at: staging.path)
            let unlocked = try vault.unlock(password: Password(secret: try source.read()), forWriting: true,
                                            rollbackGuard: context.rollbackGuard)
            let report = try unlocked.check(readData: true, repair: false)
            for p in report.problems { context.terminal.report(CLIError(message: "item '\(p.item)': \(p.message)", code: .corrupted)) }
            guard report.problems.isEmpty else {
                throw CLIError(message: "the remote copy failed its check; nothing was kept at '\(directory)'", code: .corrupted)
            }
        }
        var config = RemoteConfig()
        _ = try config.add(name: "origin", target: target)
        config.remotes[0].known = summary.generation
        try config.write(vault: staging.path)
        try staging.commit()
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Transfer(
                remote: "origin", generation: summary.generation, files: summary.files, bytes: summary.bytes,
                deleted: 0, dropIns: 0, seconds: summary.seconds, state: "cloned")))
        } else {
            context.terminal.note("cloned \(Terminal.printable(target)) into '\(directory)': "
                                  + RemoteFormat.transfer(files: summary.files, bytes: summary.bytes, seconds: summary.seconds))
            context.terminal.note("every item checked; the remote is known here as 'origin'")
        }
        return .ok
    }
}

import VaultAgent
import VaultCore
import VaultCrypto

/// `vault rekey`: a new master key and new file keys, every item re-encrypted.
struct RekeyCommand: Command {
    static let name = "rekey"
    static let abstract = "new master key and file keys, every item re-encrypted"
    static let yesFlag = FlagOption("--yes")
    static let options = [yesFlag.spec]
    static let help = """
        Usage: vault rekey [--yes]

        Makes a new master key and new keys for every item, and re-encrypts
        everything: the answer to "a copy of my old password or recovery kit
        may have leaked". The password stays the same (change it with
        'vault passwd'). Recovery kits made before stop working: export a new
        one afterwards. A kill or crash at any moment leaves the vault opening
        with the password, in the old state or the new one.

        The new header is format version 2, so drop-ins are then sealed to the
        vault's hybrid post-quantum key (X-Wing). It keeps only the key slot
        the password opened: other slots (more passwords, key files) cannot
        be re-wrapped without their secrets, so they are dropped and named.

        A thin vault's rekey first pushes what this vault changed, reads each
        blob from the remote, and sends the new ones there a batch at a time
        (at most a quarter of the cache's bound held here at once); then it
        pushes the new keys and list of items, which removes the old blobs
        there. Killed and run again, it sends only what is not there yet.

        Asks for confirmation on the terminal unless --yes is given.

        Options:
          --yes   do not ask for confirmation (for scripts)

        Examples:
          vault rekey
          vault rekey --yes --password-file ~/.config/vault/password
        """

    let confirmed: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        confirmed = arguments.isSet(Self.yesFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let thin = try context.thinVault()
        let password = try context.passwordSource().refusingAgent("rekey", keyFile: false)
        let vault = try Vault(at: context.vaultDirectory)
        if !confirmed {
            context.terminal.warning("rekey re-encrypts every item; recovery kits made before it stop working")
            guard let yes = context.terminal.confirm("continue?") else {
                throw CLIError(message: "rekey needs confirmation", hints: ["run it on a terminal, or add --yes"],
                               code: .usage)
            }
            guard yes else { throw CLIError(message: "rekey cancelled; nothing changed") }
        }
        let secret = try password.read()
        let pw = Password(secret: secret)
        let unlocked = try vault.unlock(password: pw, slot: context.globals.slot, forWriting: true,
                                    rollbackGuard: context.rollbackGuard)
        try unlocked.tidy()
        let upload = try thin.map { try ThinRekey.prepare(context, unlocked, $0) }
        let oldBlobs = Set(unlocked.manifest.entries.map(\.blobName))
        let progress = ProgressLine.start(context.terminal, "re-encrypting",
                                          total: unlocked.manifest.totalSize)
        let dropped = try unlocked.rekey(password: pw, progress: progress?.update, waiting: {
            progress?.finish()
            context.terminal.note("waiting for drop-ins in progress ('vault add') to land")
        }, offload: upload?.offload)
        progress?.finish()
        if let upload { try ThinRekey.finish(context, unlocked, upload, oldBlobs: oldBlobs) }
        // The agent's key no longer opens the vault: end it rather than leave
        // an old master key in memory until its time runs out.
        if (try? AgentClient.lock(vaultID: unlocked.vault.header.vaultID, environment: context.environment)) == true {
            context.terminal.note("the unlock agent held the old key and has ended; 'vault unlock' starts a new one")
        }
        context.terminal.note("rekeyed \(unlocked.manifest.entries.count) items; new public key fingerprint: \(unlocked.vault.header.fingerprint)")
        context.terminal.note("recovery kits made before this no longer open the vault")
        context.terminal.note("drop-ins now use \(unlocked.vault.header.publicKey.kemName)")
        if !dropped.isEmpty {
            context.terminal.warning("key slots dropped (the new master key could be wrapped only for the password given): "
                                     + dropped.joined(separator: ", "), hints: ["add them again with 'vault key add'"])
        }
        return .ok
    }
}


import VaultCore

/// `vault upgrade`: an older vault's header rewritten as format version 4
/// (from version 1: the hybrid X-Wing drop-in key and key slots; from
/// version 2: the header checksum; from version 3: the header counter),
/// nothing re-encrypted.
struct UpgradeCommand: Command {
    static let name = "upgrade"
    static let abstract = "move an older vault to the current header (X-Wing drop-ins, key slots)"
    static let help = """
        Usage: vault upgrade

        Rewrites the header of a vault made by an earlier version (format
        version 1, 2 or 3) as format version 4. From version 1, drop-ins are
        then sealed to the vault's hybrid post-quantum key (X-Wing:
        ML-KEM-768 + X25519), and key slots ('vault key') become available.
        Version 3 adds a checksum that tells a damaged header (exit 14) from
        a wrong password; version 4 a header counter, so that a remote or
        copy cannot put back an older header (a password since changed, a
        key slot since removed). The master key, the passwords, the key slots and
        every item stay as they are; nothing is re-encrypted. Drop-ins made
        before still open. The new header is verified before it replaces the
        old one. A vault already at version 4 is left alone.

        'vault rekey' and any key-slot change ('vault passwd', 'vault key
        add', 'vault key remove') upgrade the header too.

        Examples:
          vault upgrade
          vault info
        """

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource().refusingAgent("upgrade", keyFile: false)
        let secret = try password.read()
        let vault = try Vault(at: context.vaultDirectory)
        guard vault.header.version < VaultHeader.currentVersion else {
            context.terminal.note("already at format version \(vault.header.version); drop-ins use \(vault.header.publicKey.kemName)")
            return .ok
        }
        let pw = Password(secret: secret)
        let unlocked = try vault.unlock(password: pw, forWriting: true, rollbackGuard: context.rollbackGuard)
        try unlocked.upgradeHeader(password: pw)
        context.terminal.note("upgraded to format version \(unlocked.vault.header.version); drop-ins now use \(unlocked.vault.header.publicKey.kemName)")
        context.terminal.note("new public key fingerprint: \(unlocked.vault.header.fingerprint)")
        return .ok
    }
}

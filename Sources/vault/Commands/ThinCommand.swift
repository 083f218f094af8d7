import System
import VaultCore
import VaultRemote

/// `vault thin`: a full vault made thin (its blobs left on a remote that
/// proves it holds them), or with --off a thin one made full again.
struct ThinCommand: Command {
    static let name = "thin"
    static let abstract = "keep the blobs on a remote, or bring them back (--off)"
    static let offFlag = FlagOption("--off")
    static let cacheOption = ValueOption<UInt64>.byteSize("--cache-size", as: "SIZE")
    static let options = [offFlag.spec, cacheOption.spec]
    static let help = """
        Usage: vault thin [NAME] [--cache-size SIZE]
               vault thin --off

        A thin vault keeps its header, its list of items, its drop-ins and a
        cache of blocks here, and every other blob on its remote NAME (or the
        only remote), where commands read what they need by range: 'vault
        clone --thin' makes one, this command turns a full vault thin. A
        blob leaves items/ only once the remote is proven to hold the same
        (its size and its last bytes, which end in the final tag); push
        first, or the blobs not there yet stay, and leave at a later push.
        Every read is authenticated chunk by chunk as from items/. Needs no
        password.

        'vault thin --off' brings every blob the list of items names back
        here, each read through and checked before it lands, then the vault
        is full again (needs the password). rekey, upgrade and move send
        need a full vault.

        Options:
          --cache-size SIZE   the cache's bound (default 2G, at least 64M)
          --off               make the vault full again

        Examples:
          vault thin offsite --cache-size 4G
          vault thin --off
        """

    let remoteName: String?
    let cacheBytes: UInt64?
    let off: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        remoteName = try arguments.optional()
        cacheBytes = try arguments.value(Self.cacheOption)
        off = arguments.isSet(Self.offFlag)
        if off && (remoteName != nil || cacheBytes != nil) { throw arguments.usageError("--off takes no remote and no --cache-size") }
        if let cacheBytes, cacheBytes < ThinVault.minimumCache { throw arguments.usageError("--cache-size is at least 64M") }
    }

    func run(_ context: Context) throws -> ExitCode {
        if off { return try full(context) }
        let remote = try context.remote(remoteName)
        let old = try context.thinVault()
        if let old, old.remote != remote.name {
            throw CLIError(message: "this vault is thin on remote '\(old.remote)' already",
                           hints: ["'vault thin --off' first to move it to another; nothing was changed"])
        }
        let thin = ThinVault(remote: remote.name, cacheBytes: cacheBytes ?? old?.cacheBytes ?? ThinVault.defaultCache)
        // The marker first: from here reads look on the remote for what is
        // not in items/, so each blob may leave as soon as it is proven there.
        try thin.write(vault: context.vaultDirectory)
        let server = try RcloneServer(rclone: context.rclone(), target: remote.target)
        let (count, bytes) = try ThinEviction.evict(vault: context.vaultDirectory, server: server)
        let left = try Vault(at: context.vaultDirectory).storedBlobs()
        context.terminal.note("thin on '\(remote.name)' (cache up to \(Format.size(thin.cacheBytes))): "
                              + "\(Format.count(count, "blob")) (\(Format.size(bytes))) now only there")
        if left.count > 0 {
            context.terminal.note("\(Format.count(left.count, "blob")) (\(Format.size(left.bytes))) not on '\(remote.name)' stay here",
                                  hint: "'vault push \(remote.name)' sends them; they leave after it")
        }
        return .ok
    }

    /// --off: every blob the manifest names, here and checked; then full.
    private func full(_ context: Context) throws -> ExitCode {
        guard let thin = try context.thinVault() else {
            context.terminal.note("this vault is full already: nothing was changed")
            return .ok
        }
        let remote = try context.remote(thin.remote)
        let vault = try context.unlock(try context.passwordSource(), forWriting: true, reads: .none)
        guard vault.canWrite else { throw VaultError.busy }
        let wanted = try vault.manifest.entries.filter { try Syscall.status(of: vault.vault.paths.item($0.blobName)) == nil }
        let healed = try BlobHealing.heal(wanted, in: vault, remotes: [remote], rclone: context.rclone())
        let missing = wanted.filter { healed[$0.blobName] == nil }
        for e in missing {
            context.terminal.report(CLIError(message: "item '\(e.name)': no good copy on '\(remote.name)'", code: .corrupted))
        }
        guard missing.isEmpty else {
            throw CLIError(message: "the vault stays thin: \(Format.count(missing.count, "blob")) could not be brought here",
                           hints: ["what came is kept; 'vault check --read-data' says more"], code: .corrupted)
        }
        try ThinVault.remove(vault: context.vaultDirectory)
        _ = Eraser.erase(ThinVault.cacheDirectory(context.vaultDirectory))
        let bytes = wanted.reduce(UInt64(0)) { $0 &+ (vault.vault.storedLength(of: $1) ?? 0) }
        context.terminal.note("a full vault again: \(Format.count(wanted.count, "blob")) (\(Format.size(bytes))) brought from '\(remote.name)', each checked")
        return .ok
    }
}

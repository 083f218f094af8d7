import VaultAgent
import VaultCore
import VaultCrypto
import VaultRemote

/// `vault info`: what the clear header says, without the password.
struct InfoCommand: Command {
    static let name = "info"
    static let abstract = "show the vault's format and settings (no password)"
    static let jsonFlag = FlagOption("--json")
    static let options = [jsonFlag.spec]
    static let help = """
        Usage: vault info [--json]

        Shows what can be known without the password: the format version, the
        Argon2id parameters, the key slots, the key drop-ins are sealed to (its
        KEM: X-Wing, or X25519 alone for a vault not yet upgraded), how many
        items are waiting from 'vault add', and the fingerprint of the vault's
        public key. Nothing here is verified
        until the vault is unlocked ('vault check').

        Options:
          --json   one JSON document on standard output, for scripts

        Examples:
          vault info
          vault --vault /mnt/usb/vault info --json
        """

    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        json = arguments.isSet(Self.jsonFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        // Another user's shared vault: its inbox and items are not ours to
        // count, but what the header says is public.
        if vault.isSharedWithUs {
            if json { throw Context.sharedForAddingOnly(vault) }
            let h = vault.header
            for line in ["path: \(vault.paths.root)", "format version: \(h.version)", "vault id: \(Hex.encode(h.vaultID))",
                         "drop-in key: \(h.publicKey.kemName)", "shared: this vault is shared with you for adding only",
                         "public key fingerprint: \(h.fingerprint)"] {
                try context.terminal.printLine(Terminal.printable(line))
            }
            context.terminal.note("only \(ShareCommand.ownerName(vault)) can list, read or change it",
                                  hint: "add files with '\(ShareCommand.addCommand(vault))'")
            return .ok
        }
        let waiting = try vault.waitingDropIns()
        let leftovers = try vault.leftoverSize()
        let blobs = try vault.storedBlobs()
        // Whether an unlock agent runs is worth a line, never an error here.
        let agent = try? AgentClient.status(vaultID: vault.header.vaultID, environment: context.environment)
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Info(vault, waiting: waiting, leftovers: leftovers, stored: blobs,
                                                                             agent: agent ?? nil)))
        } else {
            let h = vault.header
            var lines = ["path: \(vault.paths.root)",
                         "format version: \(h.version)" + (h.version < VaultHeader.currentVersion ? "; 'vault upgrade' moves it to \(VaultHeader.currentVersion) (a header counter that remotes cannot roll back)" : ""),
                         "vault id: \(Hex.encode(h.vaultID))"]
            if let kdf = h.firstPasswordKDF {
                lines.append("argon2id: \(kdf.memoryKiB / 1024) MiB, \(Format.count(kdf.passes, "pass", "passes")), "
                             + Format.count(kdf.lanes, "lane"))
            }
            lines += ["key slots: \(h.slots.count) (" + Self.slotKinds(h.slots) + ")",
                      "drop-in key: \(h.publicKey.kemName)"
                        + (h.publicKey.isHybrid ? "" : "; 'vault upgrade' moves it to X-Wing (ML-KEM-768 + X25519)"),
                      "shared: " + (vault.isShared ? "yes (other users can add items)" : "no"),
                      "remotes: " + Self.remotes(context),
                      "thin: " + ((try context.thinVault()).map { "yes, the other blobs are on '\($0.remote)' (cache up to \(Format.size($0.cacheBytes)))" } ?? "no"),
                      "items stored: \(Format.count(blobs.count, "sealed blob")), \(Format.size(blobs.bytes)) on disk",
                      "items waiting to be absorbed: \(waiting)",
                      "leftovers of interrupted commands: \(leftovers.count)"
                        + (leftovers.count > 0 ? " (\(Format.size(leftovers.bytes)); the next unlock removes them)" : ""),
                      "public key fingerprint: \(h.fingerprint)",
                      "unlocked: " + ((agent ?? nil).map { "yes, " + UnlockCommand.describe($0) } ?? "no")]
            for line in lines {
                try context.terminal.printLine(Terminal.printable(line))
            }
        }
        return .ok
    }

    /// "none", or "'usb' (append-only for this machine), 'b2' (...)".
    static func remotes(_ context: Context) -> String {
        let remotes = (try? RemoteConfig.read(vault: context.vaultDirectory).remotes) ?? []
        guard !remotes.isEmpty else { return "none" }
        return remotes.map { r in
            "'\(r.name)'" + (RemoteRights.remembered(vault: context.vaultDirectory, remote: r.name).map { " (" + RemoteCommand.words($0) + ")" } ?? "")
        }.joined(separator: ", ")
    }

    /// "password slot 'password'", "password slots 'a', 'b'; key-file slot
    /// 'laptop'": each kind once, its slots' names after it, in header order
    /// (not "password: password", where a slot named for its kind read as a
    /// typo).
    static func slotKinds(_ slots: [KeySlot]) -> String {
        var kinds: [(kind: String, names: [String])] = []
        for slot in slots {
            let kind = slot.kind.name == "key file" ? "key-file" : slot.kind.name
            if let i = kinds.firstIndex(where: { $0.kind == kind }) { kinds[i].names.append(slot.name) } else { kinds.append((kind, [slot.name])) }
        }
        return kinds.map { k in
            "\(k.kind) slot\(k.names.count == 1 ? "" : "s") " + k.names.map { "'\(Terminal.printable($0))'" }.joined(separator: ", ")
        }.joined(separator: "; ")
    }
}

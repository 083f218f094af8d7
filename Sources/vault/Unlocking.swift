import System
import VaultAgent
import VaultCore
import VaultCrypto

extension Context {
    /// Opens the vault, reads the password, unlocks, and (when this process
    /// got the writer lock) absorbs drop-ins and, unless `tidy` is false
    /// (`check` reports leftovers rather than removing them), removes
    /// leftovers. The one unlock every command that needs the password uses.
    /// Passwords are read only once the vault is known to exist (a missing
    /// vault is exit 10 before any prompt).
    ///
    /// With `agent` (the default), this vault's unlock agent, when one runs,
    /// gives the key instead (see `open`). Commands that change how the
    /// vault opens pass false: they need a secret that opens it.
    func unlock(_ password: PasswordSource, forWriting: Bool, tidy: Bool = true, agent: Bool = true,
                reads: RemoteReads = .uncached) throws -> UnlockedVault {
        let vault = try Vault(at: vaultDirectory)
        let unlocked = try open(vault, password, forWriting: forWriting, agent: agent)
        try attachRemoteBlobs(unlocked, reads)
        // Reading must not depend on absorbing: with the disk full, the
        // drop-ins wait and everything already stored can still be read.
        var report = UnlockedVault.AbsorbReport()
        do { report = tidy ? try unlocked.tidy() : try unlocked.absorbInbox() } catch let error as SystemError {
            terminal.warning("drop-ins were not taken in: \(ErrorReport.cliError(for: error, vaultDirectory: nil).message)",
                             hints: ["they wait in the inbox and are taken in by the next command that can write"])
        }
        for (asked, kept, by) in report.keptApart {
            terminal.warning("\(by.display), another user, dropped in '\(asked)'; it was kept as '\(kept)' and your '\(asked)' is unchanged")
        }
        for (name, reason) in report.refusedSnapshots {
            terminal.warning("backup \(name) was refused: \(ErrorReport.words(for: reason)); it waits in the inbox",
                             hints: ["'vault check --repair' sets damaged drop-ins aside; then run 'vault backup' again where it was made"])
        }
        let shown = 5
        for (name, why) in report.setAside.prefix(shown) {
            let reason = switch why {
            case .idRemoved: "its id is that of an item this vault removed (a replayed or forged copy)"
            case .reservedName: "only a backup's storage may carry that name"
            }
            terminal.warning("drop-in '\(Terminal.printable(name))' was refused: \(reason); it was set aside in quarantine/")
        }
        if report.setAside.count > shown {
            terminal.warning("\(Format.count(report.setAside.count - shown, "more drop-in")) were refused the same way and set aside in quarantine/",
                             hints: ["'vault check --repair --purge' deletes what quarantine/ holds"])
        }
        if !report.rejected.isEmpty {
            terminal.warning("\(Format.count(report.rejected.count, "drop-in")) could not be opened and were left in the inbox",
                             hints: ["run 'vault check' for details"])
        }
        if report.deferred > 0 {
            terminal.warning("\(Format.count(report.deferred, "drop-in")) wait in the inbox: the vault's list of items is full, or their item has 10,000 versions",
                             hints: ["remove items, forget old versions ('vault forget'), or shorten long names"])
        }
        if !unlocked.canWrite, case let waiting = try vault.waitingDropIns(), waiting > 0 {
            if unlocked.readOnly {
                terminal.note("read-only: \(waiting) drop-in\(waiting == 1 ? "" : "s") not absorbed")
            } else {
                terminal.warning("another vault process is writing: waiting drop-ins are not listed yet")
            }
        }
        return unlocked
    }

    /// What another user's shared vault lets us do, instead of a password
    /// prompt that could only end in "permission denied".
    static func sharedForAddingOnly(_ vault: Vault) -> CLIError {
        CLIError(message: "this vault is shared with you for adding only",
                 hints: ["add files with '\(ShareCommand.addCommand(vault))'; only \(ShareCommand.ownerName(vault)) can list, read or change it"])
    }

    /// Reads the password and unlocks. On a terminal a mistyped password is
    /// asked for again, up to three prompts in one run; each wrong one
    /// counts for the delay (AttemptThrottle), whose message ends the
    /// prompting. "unlocking…" shows while Argon2id runs.
    ///
    /// First, unless the password source was given on the command line or
    /// `agent` is false, the unlock agent's key, if one runs for this vault.
    func open(_ vault: Vault, _ password: PasswordSource, forWriting: Bool, agent: Bool = true) throws -> UnlockedVault {
        // Another user's shared vault: no password of ours could open it.
        if vault.isSharedWithUs { throw Self.sharedForAddingOnly(vault) }
        if agent && !password.explicit, let unlocked = try openWithAgent(vault, forWriting: forWriting) {
            return unlocked
        }
        // No source but an agent: it could not serve (the error there would
        // have been without it), or this command does not take its key.
        if case .agentOnly(let error) = password.origin { throw agent ? error : PasswordSource.agentRefused("this") }
        if let path = password.keyFilePath {
            return try vault.unlock(keyFile: readKeyFile(path), forWriting: forWriting, rollbackGuard: rollbackGuard)
        }
        let prompts = password.isTerminal ? 3 : 1
        for attempt in 1...prompts {
            if case .terminal(let tty) = password.origin { try waitOutAttemptDelay(vault, tty) }
            let secret = try password.read()
            let status = terminal.transient("unlocking…")
            do {
                defer { status?.finish() }
                let unlocked = try vault.unlock(password: Password(secret: secret), slot: globals.slot, forWriting: forWriting,
                                                rollbackGuard: rollbackGuard)
                PasswordChangedElsewhere.clear(vault: vault.paths.root)
                return unlocked
            } catch VaultError.wrongPassword where attempt < prompts {
                terminal.note((PasswordChangedElsewhere.wrongPassword(vault: vault.paths.root)?.message ?? "wrong password") + "; try again")
            } catch VaultError.wrongPasswordDelayed where attempt < prompts {
                terminal.note("wrong password")  // the wait is said, and held, before the next prompt
            } catch VaultError.wrongPassword {
                throw PasswordChangedElsewhere.wrongPassword(vault: vault.paths.root) ?? VaultError.wrongPassword
            }
        }
        throw VaultError.wrongPassword  // not reached: the last attempt throws
    }

    /// A pending attempt delay, said and waited out before the prompt rather
    /// than after a password the user typed for nothing (cryptsetup's way:
    /// it never asks during a lockout). Echo stays off while we wait, so a
    /// password typed ahead does not show, and the prompt's TCSAFLUSH drops
    /// it: nothing typed during the wait is ever tried or counted. Ctrl-C
    /// ends the wait like any prompt. Off a terminal the unlock refuses at
    /// once instead (exit 13): a script should not sleep for 30 minutes.
    private func waitOutAttemptDelay(_ vault: Vault, _ tty: TTY) throws {
        var wait = vault.passwordWait()
        guard wait > 0 else { return }
        // Echo off first: whatever the user types on reading the note
        // must not show.
        let fd = tty.fd
        let mode = try Syscall.disableEcho(fd)
        let cleanup = Interrupts.register { Syscall.restore(fd, mode) }
        defer {
            Syscall.restore(fd, mode)
            Interrupts.unregister(cleanup)
        }
        terminal.note("too many wrong passwords: the next attempt is possible in \(Format.duration(UInt32(wait))) (at \(ErrorReport.clock(wait))); waiting",
                      hint: "Ctrl-C stops; nothing typed until the prompt is used")
        while wait > 0 {
            let status = terminal.transient("waiting \(Format.duration(UInt32(wait)))…")
            Syscall.sleep(1)
            status?.finish()
            wait = vault.passwordWait()
        }
    }

    /// A key file's secret (`--key-file`, `key add --new-key-file`), with
    /// the password file's warning when group or others may read it.
    func readKeyFile(_ path: String) throws -> KeyFileSecret {
        let (secret, readableByOthers) = try KeyFileSecret.read(path: path)
        if readableByOthers {
            terminal.warning("key file '\(path)' can be read by other users", hints: ["chmod 600 '\(path)'"])
        }
        return secret
    }

    /// The vault opened with the key this vault's unlock agent holds; nil
    /// when none runs, or when it cannot serve (said in a warning): then the
    /// password is asked for as if there were no agent. A key that does not
    /// open this header (another vault with the same id, or this one rekeyed
    /// behind the agent's back) is not used; the agent is left alone, since
    /// any directory can claim any vault id.
    func openWithAgent(_ vault: Vault, forWriting: Bool) throws -> UnlockedVault? {
        let secret: SecretBytes
        do {
            guard let key = try AgentClient.key(vaultID: vault.header.vaultID, environment: environment) else { return nil }
            secret = key
        } catch {
            terminal.warning("the unlock agent was not used: \(ErrorReport.cliError(for: error, vaultDirectory: nil).message)")
            return nil
        }
        let key = try MasterKey(secret: secret)
        do {
            return try vault.unlock(masterKey: key, forWriting: forWriting, rollbackGuard: rollbackGuard)
        } catch VaultError.corruptedOrTampered where (try? vault.header.verify(masterKey: key)) == nil {
            // The header's MAC (checked first by the unlock) is what failed:
            // the key is not this vault's. Other damage is reported as usual.
            terminal.warning("the unlock agent's key does not open this vault; asking for the password",
                             hints: ["'vault lock' ends that agent"])
            return nil
        }
    }

    /// The password read now rather than at `open`, for a command that has
    /// long work to do first (a download) and should not prompt after it;
    /// `password` as it is when this vault's agent will serve instead.
    func readEarly(_ vault: Vault, _ password: PasswordSource) throws -> PasswordSource {
        if !password.explicit, (try? AgentClient.status(vaultID: vault.header.vaultID, environment: environment)) != nil {
            return password
        }
        return PasswordSource(origin: .read(try password.read()), terminal: terminal, explicit: password.explicit)
    }
}

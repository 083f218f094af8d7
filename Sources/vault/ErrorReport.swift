import System
import VaultAgent
import VaultBackup
import VaultCore
import VaultMount
import VaultMove
import VaultRemote
import VaultCrypto

/// The one place that turns library errors into what the user reads and the
/// exit code scripts see. The switches are exhaustive on purpose: a new
/// library error does not compile until someone decides how it reads.
enum ErrorReport {
    static func cliError(for error: any Error, vaultDirectory: String?) -> CLIError {
        switch error {
        case let error as CLIError: return error
        case let error as VaultError: return cliError(for: error, vaultDirectory: vaultDirectory)
        case let error as MoveError: return cliError(for: error)
        case let error as RemoteError: return cliError(for: error)
        case let error as CryptoError: return cliError(for: error)
        case let error as AgentError: return cliError(for: error)
        case let error as BackupError: return cliError(for: error)
        case let error as MountError: return cliError(for: error)
        case let error as AddInputRefusal: return cliError(for: error)
        case let error as SystemError:
            let path = error.path.map { " '\($0)'" } ?? ""
            return CLIError(message: "cannot \(error.operation.rawValue)\(path): \(error.systemReason)")
        default: return CLIError(message: "internal error: \(error)")
        }
    }

    /// "1st", "2nd", "3rd", "4th" … (kit groups: 1 to 5).
    static func ordinal(_ n: Int) -> String {
        let suffix = (11...13).contains(n % 100) ? "th" : [1: "st", 2: "nd", 3: "rd"][n % 10] ?? "th"
        return "\(n)\(suffix)"
    }

    /// One message for every authentication failure, whatever check tripped.
    static let tampered = "data is corrupted or has been tampered with"

    private static func cliError(for error: VaultError, vaultDirectory: String?) -> CLIError {
        let vault = vaultDirectory ?? "that path"
        switch error {
        case .corruptedOrTampered:
            return CLIError(message: "vault \(tampered)", hints: ["run 'vault check --read-data' to see what is affected"],
                            code: .corrupted)
        case .itemCorrupted(let name):
            return CLIError(message: "item '\(name)': \(tampered)", code: .corrupted)
        case .headerDamaged:
            // Told apart from tampering only for a version-3 header's checksum
            // (accidental damage, VaultHeaderV3.swift); no password was tried.
            let file = vaultDirectory.map { "'\($0)/vault.header'" } ?? "vault.header"
            return CLIError(message: "the vault header is damaged (its checksum does not match)",
                            hints: ["restore \(file) from a backup, or from a remote copy of this vault (its vault.header; 'vault clone' fetches a whole copy)",
                                    "the password was not tried: this is not a wrong attempt"],
                            code: .corrupted)
        case .wrongPassword:
            return CLIError(message: "wrong password", code: .wrongPassword)
        case .wrongKeyFile:
            return CLIError(message: "the key file opens none of the vault's key slots", code: .wrongPassword)
        case .wrongPasswordDelayed(let seconds):
            return CLIError(message: "wrong password; the next attempt is possible in \(Format.duration(UInt32(clamping: seconds))) (at \(clock(seconds)))",
                            hints: ["repeated wrong passwords wait longer each time, up to 30 minutes"],
                            code: .wrongPassword)
        case .slotsNotTried(let names, let seconds):
            let quoted = names.map { "'\($0)'" }.joined(separator: ", ")
            return CLIError(message: "wrong password for the key slots tried; not tried: \(quoted) (their Argon2id cost is more than one unlock spends on a header it has not authenticated)"
                            + (seconds > 0 ? "; the next attempt is possible in \(Format.duration(UInt32(clamping: seconds)))" : ""),
                            hints: ["'vault --slot NAME ...' tries the password on one slot only"], code: .wrongPassword)
        case .lockedOut(let seconds):
            return CLIError(message: "too many wrong passwords; try again in \(Format.duration(UInt32(clamping: seconds))) (at \(clock(seconds)))",
                            hints: ["the wait is cleared by the next correct password"], code: .lockedOut)
        case .notAVault:
            return CLIError(message: "no vault at '\(vault)'",
                            hints: ["create one with 'vault init', or point --vault or VAULT_DIR at one"], code: .noVault)
        case .unsupportedVersion(let version):
            return CLIError(message: "the vault at '\(vault)' has format version \(version), which this vault cannot read",
                            hints: ["upgrade vault"])
        case .newerItemFormat(let item, let flags):
            let what = item.isEmpty ? "an item" : "item '\(item)'"
            return CLIError(message: "\(what) uses a format this vault cannot read (item flags 0x\(String(flags, radix: 16)))",
                            hints: ["upgrade vault: a newer version wrote it (a new codec), or the item is damaged"],
                            code: .corrupted)
        case .readOnly(let path, let cause):
            let reason = switch cause {
            case .anotherUsersVault: "it is another user's vault"
            case .denied(let errno): errno.description
            }
            return CLIError(message: "the vault at '\(path)' cannot be changed from here: \(reason)",
                            hints: ["reading works; to change it, use a writable copy"])
        case .busy:
            return CLIError(message: "the vault is busy: another vault process is writing to it",
                            hints: ["try again when it has finished"], code: .busy)
        case .alreadyExists(let path):
            return CLIError(message: "'\(path)' already exists", hints: ["vault never overwrites; choose another name"],
                            code: .exists)
        case .noSuchItem(let name):
            return CLIError(message: "no item named '\(name)'", hints: ["see 'vault list'"], code: .noSuchItem)
        case .noSuchFileInFolder(let folder, let path):
            return CLIError(message: "no file \(folder)/\(path) in folder item \(folder)",
                            hints: ["'vault restore \(folder)' writes the whole folder"], code: .noSuchItem)
        case .wrongItemKind(let name, let expected):
            return CLIError(message: "'\(name)' is not \(words(for: expected))")
        case .notAFileInFolder(let folder, let path, .symbolicLink):
            return CLIError(message: "'\(folder)/\(path)' is a symbolic link in folder item '\(folder)': "
                            + "only a file or a directory can be taken out of a folder item")
        case .notAFileInFolder(let folder, let path, .directory):
            return CLIError(message: "'\(folder)/\(path)' is a directory in folder item '\(folder)': "
                            + "'vault restore \(folder)/\(path)' writes it")
        case .noSuchVersion(let name, let version):
            let which = switch version {
            case .number(let n): "\(n)"
            case .atTime: "at that time"
            }
            return CLIError(message: "item '\(name)' has no version \(which)", hints: ["see 'vault list --versions \(name)'"],
                            code: .noSuchItem)
        case .forgetsEveryVersion:
            return CLIError(message: "forget would drop an item's every version")
        case .tooManyVersions(let name):
            return CLIError(message: "item '\(name)' has \(Manifest.maxVersions) versions, as many as a vault keeps",
                            hints: ["drop old ones with 'vault forget \(name) --keep-last N', then try again"])
        case .waitingSnapshotUnreadable(let dropIn):
            return CLIError(message: "a backup waiting in the inbox cannot be read (inbox/\(dropIn).item): prune stopped, since what it needs cannot be known",
                            hints: ["nothing was deleted; 'vault check --repair' sets damaged drop-ins aside, then prune again"],
                            code: .corrupted)
        case .inboxUnreadable(let file, let errno):
            return CLIError(message: "a drop-in waiting in the inbox cannot be read (inbox/\(file): \(errno)): stopped, since what it holds cannot be known",
                            hints: ["nothing was changed; 'vault check --repair' sets drop-ins that cannot be read aside, then try again"])
        case .itemIDRemoved(let name):
            return CLIError(message: "'\(name)' has the id of an item this vault removed: ids are never taken in again",
                            hints: ["nothing was changed"], code: .corrupted)
        case .invalidName(let name) where BackupItems.isReservedName(name):
            return CLIError(message: "'\(name)' cannot be an item name: it is the name of a backup's storage",
                            hints: ["choose another name (--name)"])
        case .invalidName(let name):
            return CLIError(message: "'\(name)' cannot be an item name",
                            hints: ["names are not empty, have no '/' or control characters, and are not too long"])
        case .kitLine(let line, let problem):
            let n = line < 10 ? "0\(line)" : "\(line)"
            let what: String
            switch problem {
            case .missing: what = "line \(n) is missing"
            case .repeated: what = "line \(n) appears twice"
            case .noSuchLine: what = "line \(n): a kit has lines 01 to \(KitArmor.lines) only"
            case .wrongLength(let have, let want, let group):
                what = "line \(n) has \(have) characters, not \(want)" + (group.map { ": check the \(ordinal($0)) group" } ?? "")
            case .badCharacter(let group):
                what = "line \(n): the \(ordinal(group)) group has a character no kit has (kits use A-Z and 2-7)"
            case .checksum(let groups, let orChecksum):
                // "check the 3rd group", "check the 1st or 3rd group, or the checksum"
                var places = groups.map { ordinal($0) }
                if !places.isEmpty { places = [places.count == 1 ? places[0] : places.dropLast().joined(separator: ", ") + " or " + places.last!] }
                let where_ = places.isEmpty ? (orChecksum ? "check the checksum (its last two characters)" : "check the line: more than one character is wrong")
                    : "check the \(places[0]) group" + (orChecksum ? ", or the checksum (its last two characters)" : "")
                what = "line \(n): checksum does not match: " + where_
            }
            return CLIError(message: "recovery kit " + what, hints: ["each line starts with its number and ends with a 2-character checksum"],
                            code: .corrupted)
        case .kitDamaged:
            return CLIError(message: "the recovery kit is damaged or incomplete", code: .corrupted)
        case .kitForAnotherVault:
            return CLIError(message: "this recovery kit belongs to another vault",
                            hints: ["compare the vault id on the kit with 'vault info'"])
        case .kitStale:
            return CLIError(message: "this recovery kit is from before the vault was rekeyed and no longer opens it",
                            hints: ["use a kit exported after the last 'vault rekey'"])
        case .unsafeArchiveEntry(let item, let entry, let reason):
            return CLIError(message: "refusing to restore '\(item)': entry '\(entry)': \(words(for: reason))",
                            hints: ["nothing of that item was written"])
        case .changedWhileReading(let path):
            return CLIError(message: "'\(path)' changed while it was being read")
        case .unsafeVaultPath(let path):
            return CLIError(message: "refusing '\(path)': a symbolic link or not the expected kind of file")
        case .unsafeScratch(let path):
            return CLIError(message: "refusing '\(path)' for private copies: it is not yours, or others can write to it",
                            hints: ["remove it, or point XDG_RUNTIME_DIR at a directory only you can write"])
        case .notARegularFile(let path, let what, let kind):
            // Never read: a FIFO would wait for a writer for ever, a device never end.
            return CLIError(message: "\(words(for: what)) '\(path)' is \(words(for: kind)), not a regular file")
        case .inputTooLarge(let limit):
            return CLIError(message: "input larger than \(limit) bytes")
        case .itemTooLarge:
            return CLIError(message: "item larger than the format allows")
        case .noSuchKeySlot(let name):
            return CLIError(message: "no key slot named '\(name)'")
        case .notAPasswordSlot(let name, let kind):
            return CLIError(message: "key slot '\(name)' is a \(kind.name) slot, not a password slot")
        case .keySlotExists(let name):
            return CLIError(message: "a key slot named '\(name)' exists")
        case .tooManyKeySlots:
            return CLIError(message: "a vault has at most \(KeySlot.maxSlots) key slots")
        case .lastKeySlot(let name):
            return CLIError(message: "'\(name)' is the vault's last key slot; add another one first")
        case .invalidKeySlotName:
            return CLIError(message: "a key slot name is 1 to \(KeySlot.maxNameBytes) letters, digits or -_.@")
        case .keyFileLength(nil, _):
            return CLIError(message: "a key file holds \(KeyFileSecret.minLength) to \(KeyFileSecret.maxLength) bytes")
        case .keyFileLength(let path?, let bytes):
            return CLIError(message: "key file '\(path)' holds \(bytes) bytes; a key file holds \(KeyFileSecret.minLength) to \(KeyFileSecret.maxLength)")
        case .version1NeedsPassword:
            return CLIError(message: "a vault of format version 1 is upgraded with its password: unlock with it")
        case .rekeyNeedsPassword:
            return CLIError(message: "rekey keeps the password slot it was unlocked with; unlock with a password")
        case .rekeyBlobsGone(let count):
            return CLIError(message: "\(Format.count(count, "re-encrypted blob")) left the remote while this rekey ran (another machine's push removes what its list of items does not name)",
                            hints: ["the vault was not rekeyed; run 'vault rekey' again when no other machine pushes: it sends only those again"],
                            code: .busy)
        case .kdfAboveLimits:
            return CLIError(message: "Argon2 parameters above the header limits (2 GiB, 16 passes, 8 lanes)")
        case .headerCounterExhausted:
            return CLIError(message: "the header counter is at its limit")
        case .misuse(let misuse):
            return CLIError(message: words(for: misuse))
        case .rollback(let seen, let found):
            return CLIError(message: "the vault's list of items is older than one seen here before (generation \(found), seen \(seen)): an older copy was put back in place",
                            hints: ["nothing was changed; if you restored an older backup on purpose, run the command again with --accept-rollback"],
                            code: .corrupted)
        case .headerRollback(let seen, let found):
            return CLIError(message: "the vault header is older than one seen here before (counter \(found), seen \(seen)): an older copy was put back in place",
                            hints: ["nothing was changed; in an older header a password since changed, or a key slot since removed, may open the vault",
                                    "if you restored an older backup on purpose, run the command again with --accept-rollback"],
                            code: .corrupted)
        case .manifestFull:
            return CLIError(message: "the vault is full: its list of items would pass 1,000,000 items or 256 MiB",
                            hints: ["remove items, or shorten long names, then try again"])
        }
    }

    private static func cliError(for error: MoveError) -> CLIError {
        switch error {
        case .codeMismatch:
            return CLIError(message: "the receiver does not hold the keys of this move code: a typo, an old code, or someone in between",
                            hints: ["nothing was sent; start 'vault move receive' again and use its new code"], code: .moveCodeRefused)
        case .receiverKeyMismatch:
            return CLIError(message: "the receiver's key is corrupted or tampered with: it does not match the move code",
                            hints: ["nothing was sent; start 'vault move receive' again and use its new code"], code: .corrupted)
        case .shortCodeSpent(let peer):
            return CLIError(message: "\(peer) tried a wrong short code, so this code is spent; stopped listening",
                            hints: ["nothing was received; start 'vault move receive --words' again for a new code"], code: .moveCodeRefused)
        case .tooManyWrongCodes(let count):
            return CLIError(message: "\(count) connections did not hold the move code; stopped listening",
                            hints: ["nothing was received; start 'vault move receive' again for a new code"], code: .moveCodeRefused)
        case .wrongShortCode:
            return CLIError(message: "a sender tried a wrong short code, so this code is spent; stopped listening",
                            hints: ["nothing was received; start 'vault move receive --words' again for a new code"], code: .moveCodeRefused)
        case .connectionLost:
            return CLIError(message: "the connection ended before the move was confirmed",
                            hints: ["the old vault was not erased; run the move again"])
        case .refused(let reason):
            return CLIError(message: "the receiver refused the vault: \(words(for: reason))", hints: ["the vault here is untouched"])
        case .noSpace(let bytes, let directory):
            return CLIError(message: "cannot receive \(bytes) bytes into '\(directory)': \(Errno.noSpace)")
        case .tooManyFiles:
            return CLIError(message: "too many files to move")
        case .misuse(let misuse):
            return CLIError(message: words(for: misuse))
        }
    }

    /// The local time `seconds` from now, "14:05:09".
    static func clock(_ seconds: Int) -> String {
        let at = Syscall.now() + Int64(max(0, min(seconds, 86_400 * 366)))
        guard let t = Syscall.localTime(at) else { return "?" }
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return two(t.hour) + ":" + two(t.minute) + ":" + two(t.second)
    }

    private static func cliError(for error: CryptoError) -> CLIError {
        switch error {
        case .authenticationFailed, .weakSharedSecret, .invalidLength, .invalidKey:
            return CLIError(message: tampered, code: .corrupted)
        case .invalidParameter(let parameter):
            return CLIError(message: words(for: parameter))
        case .library(let library, let function, let code):
            return CLIError(message: "internal error: \(library) \(function) failed with code \(code)")
        case .outOfMemory:
            return CLIError(message: "out of locked memory for keys", hints: ["raise 'ulimit -l'"])
        }
    }

    private static func cliError(for error: AgentError) -> CLIError {
        switch error {
        case .noRuntimeDirectory:
            return CLIError(message: "cannot start an unlock agent: XDG_RUNTIME_DIR is not set, and there is no /run/user/UID or /dev/shm",
                            hints: ["log in through a session that sets it (systemd-logind does), or set it to a directory only you can use (0700)"])
        case .unsafeDirectory(let path, let problem):
            return CLIError(message: "refusing the unlock agent's directory '\(path)': \(words(for: problem))",
                            hints: ["it must be a directory of yours, mode 0700; remove it if you did not make it"])
        case .alreadyRunning:
            return CLIError(message: "an unlock agent already runs for this vault", hints: ["'vault unlock --status' says for how long"])
        case .foreignPeer(let user):
            return CLIError(message: "the unlock agent's socket is served by another user (uid \(user)); not used")
        case .badAnswer:
            return CLIError(message: "the unlock agent gave no valid answer")
        case .badSetup:
            return CLIError(message: "the unlock agent did not start: bad setup")
        case .handOverFailed:
            return CLIError(message: "the unlock agent did not start: could not hand over the key")
        case .startFailed(let reason):
            return CLIError(message: "the unlock agent did not start: \(reason.isEmpty ? "it did not start" : reason)")
        }
    }

    /// Why the agent process (the binary in its agent mode) could not
    /// start, as it reports on its pipe; `vault unlock` shows it as the
    /// reason of `startFailed`.
    static func agentReport(for error: any Error) -> String {
        switch error {
        case AgentError.noRuntimeDirectory: "XDG_RUNTIME_DIR is not set"
        case AgentError.unsafeDirectory(let path, let problem): "\(path) is not private: \(words(for: problem))"
        case AgentError.badSetup: "bad setup"
        case let e as SystemError: "\(e.operation.rawValue) \(e.path ?? ""): \(e.reason)"
        default: cliError(for: error, vaultDirectory: nil).message
        }
    }

    private static func cliError(for error: BackupError) -> CLIError {
        switch error {
        case .snapshotCorrupted(let snapshot, let damage):
            return CLIError(message: "snapshot \(snapshot.prefix(8)) is corrupted or tampered with: \(words(for: damage))",
                            hints: ["run 'vault check --read-data' to see what is affected"], code: .corrupted)
        case .noSuchSnapshot(let id):
            return CLIError(message: "no snapshot '\(Terminal.printable(id))'", hints: ["'vault snapshots' lists them"], code: .noSuchItem)
        case .ambiguousSnapshot(let id):
            return CLIError(message: "'\(Terminal.printable(id))' is the start of several snapshot ids", hints: ["give more of the id"], code: .usage)
        case .noSuchPath(let path):
            return CLIError(message: "no '\(Terminal.printable(path))' in that snapshot", hints: ["'vault snapshots ls SNAPSHOT' lists its paths"], code: .noSuchItem)
        case .invalidCache:
            return CLIError(message: "the backup cache is damaged")
        case .duplicateName(let name):
            return CLIError(message: "two paths end in the name '\(Terminal.printable(name))'", code: .usage)
        case .packsRemovedMeanwhile(let count):
            return CLIError(message: "the vault's owner pruned it while this backup ran, removing \(Format.count(count, "pack")) the backup needed; nothing of this backup was kept",
                            hints: ["run the backup again: this host's cache has forgotten those packs, so it stores them anew"])
        case .treeTooLarge(let entries):
            return CLIError(message: "a directory has too many entries for one tree (\(entries))")
        case .hostRecordRefused:
            return CLIError(message: "the remote's record for this host does not open: damaged, or not the owner's", code: .corrupted)
        case .hostRecordOlder(let seen, let served):
            return CLIError(message: "the remote served an older record for this host (generation \(served), after \(seen))", code: .corrupted)
        case .commandFailed(let how):
            let ended: String
            switch how {
            case .exited(let code): ended = "exited with status \(code)"
            case .signaled(let signal): ended = "was killed by signal \(signal)"
            }
            return CLIError(message: "the command of --stdin-from-command \(ended): no snapshot was made",
                            hints: ["its own messages, above, say why"])
        case .hostRecordMissing:
            return CLIError(message: "the remote's record for this host is gone, though this host read one before", code: .corrupted)
        case .hostRecordRetired:
            return CLIError(message: "the vault no longer holds any snapshot of this host, so the packs it sent may be gone")
        }
    }

    private static func cliError(for error: MountError) -> CLIError {
        switch error {
        case .fuseDidNotStart:
            return CLIError(message: "FUSE would not start (is /dev/fuse there?)")
        case .mountFailed(let mountpoint):
            return CLIError(message: "could not mount on '\(mountpoint)' (is fusermount3 installed?)")
        }
    }

    private static func cliError(for error: AddInputRefusal) -> CLIError {
        switch error {
        case .pathNotUTF8:
            return CLIError(message: "the path is not valid UTF-8, so vault cannot name it; "
                            + "rename it, or use 'vault add - --name NAME < FILE'")
        case .notFileOrFolder:
            return CLIError(message: "not a regular file or folder")
        }
    }
}

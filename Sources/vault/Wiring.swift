import System
import VaultCore
import VaultCrypto

// The bridge between the command line and VaultCore: one function per
// command, called from that command's run() after parsing and validation.
// Passwords are read only once the vault is known to exist (a missing vault
// is exit 10 before any prompt). Errors are thrown as they come; ErrorReport
// turns them into one message and one exit code.
enum Wiring {
    static func initVault(_ command: InitCommand, _ context: Context, password: NewPasswordSource) throws -> ExitCode {
        let paths = VaultPaths(root: context.vaultDirectory)
        if (try? Vault(at: paths.root)) != nil { throw VaultError.alreadyExists(path: paths.root) }
        let secret = try password.read()
        var kdf: Argon2Parameters
        var seconds: Double? = nil
        if command.kdf.skipsCalibration {
            kdf = try command.kdf.parameters(calibrated: KDFCalibration.minimum)
        } else {
            context.terminal.note("calibrating Argon2id on this machine…")
            let (calibrated, measured) = try KDFCalibration.calibrate()
            kdf = try command.kdf.parameters(calibrated: calibrated)
            if kdf == calibrated { seconds = measured }
        }
        let vault = try Vault.create(at: paths.root, password: Password(secret: secret), kdf: kdf,
                                     options: command.compressByDefault ? [.compressByDefault] : []).vault
        let time = seconds.map { String(format: " (%.2f s per unlock here)", $0) } ?? ""
        context.terminal.note("created a vault at '\(paths.root)'")
        context.terminal.note("argon2id: \(kdf.memoryKiB / 1024) MiB, \(kdf.passes) passes, \(kdf.lanes) lane\(kdf.lanes == 1 ? "" : "s")\(time)")
        context.terminal.note("public key fingerprint: \(vault.header.fingerprint)")
        if KDFCalibration.isWeak(kdf) {
            context.terminal.warning("these Argon2id settings are weak: for tests and demos only")
        }
        return .ok
    }

    static func add(_ command: AddCommand, _ context: Context) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        var skipped = false
        for path in command.paths {
            do {
                let progress = ProgressLine.start(context.terminal, "adding \(path)", total: FileHandleFD.size(of: path))
                defer { progress?.finish() }
                let (entry, skippedInside) = try dropIn(path, name: command.itemName, into: vault,
                                                        compression: command.compression ?? vault.defaultCompression,
                                                        progress: progress?.update)
                for inner in skippedInside {
                    skipped = true
                    context.terminal.warning("skipped '\(path)/\(inner)': not a regular file, folder or symlink")
                }
                let what = entry.kind == .folder ? "\(entry.fileCount) files, " : ""
                context.terminal.note("added '\(entry.name)' (\(what)\(Format.size(entry.size)))")
            } catch let error as VaultError where error.isAboutOneInput {
                skipped = true
                context.terminal.warning("skipped '\(path)': \(ErrorReport.cliError(for: error, vaultDirectory: nil).message)")
            } catch let error as SystemError {
                skipped = true
                context.terminal.warning("skipped '\(path)': \(ErrorReport.cliError(for: error, vaultDirectory: nil).message)")
            }
        }
        return skipped ? .partial : .ok
    }

    /// One input of `add`: stdin, a file, or a folder (with the paths of
    /// special files inside it that were left out).
    private static func dropIn(_ path: String, name: String?, into vault: Vault, compression: Compression,
                               progress: ((UInt64) -> Void)?) throws -> (ManifestEntry, [String]) {
        if path == "-" {
            let now = Int64(Date().timeIntervalSince1970)
            return (try vault.dropIn(from: FileHandleFD(borrowing: 0), name: name!, mode: 0o600, modified: now,
                                     compression: compression, progress: progress), [])
        }
        guard let kind = try FileHandleFD.kind(of: path) else {
            throw SystemError(operation: "open", path: path, errno: .noSuchFile)
        }
        guard kind.regular || kind.directory else { throw VaultError.invalidArgument("not a regular file or folder") }
        let source = try FileHandleFD(readingFrom: path, followSymlinks: true)
        let status = try source.status()
        let itemName = name ?? String(path.split(separator: "/").last ?? Substring(path))
        if status.directory {
            return try vault.dropIn(folder: path, name: itemName, mode: status.mode, modified: status.modified,
                                    compression: compression)
        }
        guard status.regular else { throw VaultError.invalidArgument("not a regular file or folder") }
        return (try vault.dropIn(from: source, name: itemName, mode: status.mode, modified: status.modified,
                                 compression: compression, progress: progress), [])
    }

    /// Opens the vault, reads the password, unlocks, and (when this process
    /// got the writer lock) absorbs drop-ins and, unless `tidy` is false
    /// (`check` reports leftovers rather than removing them), removes leftovers.
    private static func unlock(_ context: Context, _ password: PasswordSource, forWriting: Bool,
                               tidy: Bool = true) throws -> UnlockedVault {
        let vault = try Vault(at: context.vaultDirectory)
        let secret = try password.read()
        let unlocked = try vault.unlock(password: Password(secret: secret), forWriting: forWriting)
        let report = tidy ? try unlocked.tidy() : try unlocked.absorbInbox()
        if !report.rejected.isEmpty {
            context.terminal.warning("\(report.rejected.count) drop-in(s) could not be opened and were left in the inbox",
                                     hints: ["run 'vault check' for details"])
        }
        if !unlocked.canWrite, try vault.waitingDropIns() > 0 {
            context.terminal.warning("another vault process is writing: waiting drop-ins are not listed yet")
        }
        return unlocked
    }

    static func list(_ command: ListCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        let vault = try unlock(context, password, forWriting: false)
        // Byte order, as names are compared (String's < would also be slower).
        let entries = vault.manifest.entries.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        if command.json {
            try JSON.writeList(entries, to: context.terminal)
        } else {
            try context.terminal.printBuffered { emit in
                for e in entries { try emit(Format.listLine(e) + "\n") }
            }
        }
        return .ok
    }

    static func info(_ command: InfoCommand, _ context: Context) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        let waiting = try vault.waitingDropIns()
        if command.json {
            try context.terminal.printLine(JSON.info(vault, waiting: waiting))
        } else {
            let h = vault.header
            for line in ["path: \(vault.paths.root)",
                         "format version: \(VaultHeader.version)",
                         "vault id: \(Hex.encode(h.vaultID))",
                         "argon2id: \(h.kdf.memoryKiB / 1024) MiB, \(h.kdf.passes) passes, \(h.kdf.lanes) lanes",
                         "items waiting to be absorbed: \(waiting)",
                         "public key fingerprint: \(h.fingerprint)"] {
                try context.terminal.printLine(Terminal.printable(line))
            }
        }
        return .ok
    }

    static func get(_ command: GetCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        let vault = try unlock(context, password, forWriting: false)
        let entry = try vault.entry(named: command.itemName)
        let progress = ProgressLine.start(context.terminal, "decrypting \(entry.name)", total: entry.size)
        defer { progress?.finish() }
        if let file = command.outputFile {
            try export(entry, from: vault, to: file, progress: progress)
        } else {
            let out = StandardOutputSink(context.terminal)
            try vault.read(entry, to: progress.map { ProgressSink(out, report: $0.update) } ?? out)
        }
        return .ok
    }

    /// Writes an item to a new file, removing the partial plaintext if
    /// interrupted (the core removes it on any error).
    private static func export(_ entry: ManifestEntry, from vault: UnlockedVault, to path: String,
                               progress: ProgressLine? = nil) throws {
        var token: Interrupts.Token?
        defer { token.map(Interrupts.unregister) }
        try vault.export(entry, to: path, tempFile: { temp in
            token = Interrupts.register { try? Syscall.unlink(temp) }
        }, progress: progress?.update)
    }

    static func restore(_ command: RestoreCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        let vault = try unlock(context, password, forWriting: false)
        let entries = try command.itemNames.map { try vault.entry(named: $0) }
        var firstFailure: Error?
        for entry in entries {
            let target = command.directory + "/" + entry.name
            do {
                if entry.kind == .folder {
                    // Ctrl-C mid-extraction must not leave plaintext behind.
                    var token: Interrupts.Token?
                    defer { token.map(Interrupts.unregister) }
                    try vault.restoreFolder(entry, to: target) { partial, stop in
                        token = Interrupts.register {
                            stop.stopAndWait(seconds: 5)   // the extraction erases what it wrote, then we make sure
                            UserFiles.erase(partial)
                        }
                    }
                } else {
                    let progress = ProgressLine.start(context.terminal, "restoring \(entry.name)", total: entry.size)
                    defer { progress?.finish() }
                    try export(entry, from: vault, to: target, progress: progress)
                }
                context.terminal.note("restored '\(entry.name)' to '\(target)'")
            } catch {
                firstFailure = firstFailure ?? error
                context.terminal.report(ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory))
            }
        }
        if let firstFailure { throw ReportedError(ErrorReport.cliError(for: firstFailure, vaultDirectory: nil).code) }
        return .ok
    }

    static func remove(_ command: RemoveCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        let vault = try unlock(context, password, forWriting: true)
        try vault.remove(command.itemNames)
        for name in command.itemNames { context.terminal.note("removed '\(name)'") }
        return .ok
    }

    static func rename(_ command: RenameCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        let vault = try unlock(context, password, forWriting: true)
        try vault.rename(command.itemName, to: command.newName)
        context.terminal.note("renamed '\(command.itemName)' to '\(command.newName)'")
        return .ok
    }

    static func passwd(_ command: PasswdCommand, _ context: Context, password: PasswordSource,
                       newPassword: NewPasswordSource) throws -> ExitCode {
        let vault = try unlock(context, password, forWriting: true)
        let secret = try newPassword.read()
        try vault.changePassword(to: Password(secret: secret))
        context.terminal.note("password changed")
        return .ok
    }

    static func open(_ command: OpenCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        let vault = try unlock(context, password, forWriting: true)
        let entry = try vault.entry(named: command.itemName)
        let folder = entry.kind == .folder
        // A folder opens in a shell started inside it; a file in the editor.
        let editor = command.with
            ?? (folder ? context.environment.nonEmpty("SHELL") ?? "/bin/sh"
                       : context.environment.nonEmpty("VISUAL") ?? context.environment.nonEmpty("EDITOR") ?? "xdg-open")
        let scratch = try Scratch(base: Scratch.base(vaultRoot: vault.vault.paths.root, environment: context.environment))
        let token = Interrupts.register { scratch.erase() }
        defer { scratch.erase(); Interrupts.unregister(token) }
        let copy = scratch.path + "/" + entry.name
        if folder { try vault.restoreFolder(entry, to: copy) } else { try vault.export(entry, to: copy) }
        let before = try TreeFingerprint.of(copy)

        let pid = command.with == nil && folder
            ? try Syscall.spawnShell(editor, arguments: [], directory: copy)
            : try Syscall.spawnShell(editor, arguments: [copy], directory: nil)
        let status = try Syscall.wait(pid)
        guard status == .exited(0) else {
            throw CLIError(message: "'\(editor)' \(status.description); changes (if any) were not saved",
                           hints: ["the stored item is unchanged and the private copy was erased"])
        }
        guard try TreeFingerprint.of(copy) != before else {
            context.terminal.note("'\(entry.name)' unchanged")
            return .ok
        }
        do {
            let now = Int64(Date().timeIntervalSince1970)
            if folder {
                try vault.replaceFolder(entry, from: copy, now: now)
            } else {
                let source = try FileHandleFD(readingFrom: copy)
                try vault.replaceItem(entry, flags: [], now: now) { writer in (try writer.consume(source), 1) }
            }
        } catch {
            let report = ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory)
            throw CLIError(message: "saving '\(entry.name)' failed: \(report.message); the stored item is unchanged",
                           hints: report.hints, code: report.code)
        }
        context.terminal.note("saved the changes to '\(entry.name)'")
        return .ok
    }

    static func kitExport(_ command: KitCommand, _ context: Context, password: PasswordSource,
                          passphrase: NewPasswordSource?, output: String?) throws -> ExitCode {
        if let output, UserFiles.exists(output) { throw VaultError.alreadyExists(path: output) }
        let vault = try unlock(context, password, forWriting: false)
        var generated: [UInt8] = []
        defer { SecureZero.zero(&generated) }
        let secret: SecretBytes
        if let passphrase {
            secret = try passphrase.read(what: "kit passphrase")
            // Characters = UTF-8 lead bytes; counted in place, without a copy of the secret.
            guard secret.withUnsafeBytes({ $0.reduce(0) { $0 + ($1 & 0xC0 != 0x80 ? 1 : 0) } }) >= 8 else {
                throw CLIError(message: "the kit passphrase must have at least 8 characters",
                               hints: ["or let vault make one: 'vault kit export --generate'"], code: .usage)
            }
        } else {
            generated = KitArmor.generatedPassphrase()
            secret = try SecretBytes(copying: generated.withUnsafeBytes { $0 })
        }
        var kdf: Argon2Parameters
        if command.kdf.skipsCalibration {
            kdf = try command.kdf.parameters(calibrated: KDFCalibration.minimum)
        } else {
            context.terminal.note("calibrating Argon2id for the kit…")
            kdf = try command.kdf.parameters(calibrated: KDFCalibration.calibrate().0)
        }
        let kit = try vault.exportKit(passphrase: Password(secret: secret), kdf: kdf)
        let document = try KitDocument.text(kit: kit, fingerprint: vault.vault.header.fingerprint, created: Date())
        if let output {
            try UserFiles.writeNew(Array(document.utf8), to: output)
            context.terminal.note("wrote the recovery kit to '\(output)' (keep it offline; whoever has it and its passphrase can open the vault)")
        } else {
            try context.terminal.printLine(document)
        }
        if !generated.isEmpty {
            try context.terminal.printLine("kit passphrase (shown once, write it down): " + String(decoding: generated, as: UTF8.self))
        }
        return .ok
    }

    static func kitRecover(_ command: KitCommand, _ context: Context, kit path: String,
                           passphrase: PasswordSource, newPassword: NewPasswordSource) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        let text: [UInt8]
        if path == "-" {
            text = try FileHandleFD(borrowing: 0).readAll(limit: 64 << 10)
        } else {
            text = try FileHandleFD(readingFrom: path, followSymlinks: true).readAll(limit: 64 << 10)
        }
        let kit = try RecoveryKit(parsing: KitArmor.decode(String(decoding: text, as: UTF8.self)))
        let secret = try passphrase.read(prompt: "kit passphrase: ")
        let unlocked: UnlockedVault
        do { unlocked = try vault.unlock(kit: kit, passphrase: Password(secret: secret)) } catch VaultError.wrongPassword {
            throw CLIError(message: "wrong kit passphrase", code: .wrongPassword)
        }
        try unlocked.tidy()
        let new = try newPassword.read()
        try unlocked.changePassword(to: Password(secret: new))
        context.terminal.note("recovered: the vault now opens with the new password")
        return .ok
    }

    static func rekey(_ command: RekeyCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        if !command.confirmed {
            context.terminal.warning("rekey re-encrypts every item; recovery kits made before it stop working")
            guard let yes = context.terminal.confirm("continue?") else {
                throw CLIError(message: "rekey needs confirmation", hints: ["run it on a terminal, or add --yes"],
                               code: .usage)
            }
            guard yes else { throw CLIError(message: "rekey cancelled; nothing changed") }
        }
        let secret = try password.read()
        let pw = Password(secret: secret)
        let unlocked = try vault.unlock(password: pw, forWriting: true)
        try unlocked.tidy()
        let progress = ProgressLine.start(context.terminal, "re-encrypting",
                                          total: unlocked.manifest.totalSize)
        try unlocked.rekey(password: pw, progress: progress?.update)
        progress?.finish()
        context.terminal.note("rekeyed \(unlocked.manifest.entries.count) items; new public key fingerprint: \(unlocked.vault.header.fingerprint)")
        context.terminal.note("recovery kits made before this no longer open the vault")
        return .ok
    }

    static func check(_ command: CheckCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        let vault = try unlock(context, password, forWriting: command.repair, tidy: false)
        let total = vault.manifest.totalSize
        let progress = command.readData ? ProgressLine.start(context.terminal, "checking", total: total) : nil
        let report = try vault.check(readData: command.readData, repair: command.repair, progress: progress?.update)
        progress?.finish()
        if command.json {
            try context.terminal.printLine(JSON.check(report, readData: command.readData))
        } else {
            for p in report.problems { context.terminal.report(CLIError(message: "item '\(p.item)': \(p.message)", code: .corrupted)) }
            for f in report.leftovers {
                context.terminal.warning("leftover of an interrupted operation: \(f)", hints: ["'vault check --repair' removes it"])
            }
            for f in report.rejectedDropIns { context.terminal.warning("drop-in that cannot be opened: inbox/\(f)") }
            for f in report.removed { context.terminal.note("removed \(f)") }
            let what = command.readData ? "\(report.itemsChecked) items, \(Format.size(report.bytesChecked)) read" : "\(report.itemsChecked) items"
            context.terminal.note(report.problems.isEmpty ? "no problems found (\(what))" : "\(report.problems.count) damaged item(s) (\(what))")
        }
        if !report.problems.isEmpty { throw ReportedError(.corrupted) }
        return .ok
    }
}

extension VaultError {
    /// Errors that concern one input of `add` (skip it, go on with the rest)
    /// rather than the vault.
    var isAboutOneInput: Bool {
        switch self {
        case .invalidName, .invalidArgument: return true
        default: return false
        }
    }
}

import Foundation

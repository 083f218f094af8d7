import System
import VaultCodecs
import VaultCore

/// `vault restore`: items written out under a directory.
struct RestoreCommand: Command {
    static let name = "restore"
    static let abstract = "write items out under a directory"
    static let toOption = ValueOption<String>.text("--to", as: "DIR")
    static let options = [toOption.spec] + VersionChoice.specs
    static let help = """
        Usage: vault restore NAME... [--to DIR] [--version N | --at DATE]

        Writes each item NAME to a file of that name under DIR (the current
        directory by default; created if missing): its current version, or
        an older one. NAME may be a shell-style pattern ('*.pdf', quoted so
        the shell leaves it alone). Needs the password. Existing files are
        never overwritten: such an item is skipped, the others are restored,
        and the exit code is 3 (said before the password is asked when every
        NAME is a plain name whose target exists). A restored file gets the item's permissions
        and modification time back; a folder item is restored as a directory.

        FOLDER/PATH restores one file or directory from inside the folder
        item FOLDER to DIR/its own name (found as 'vault get FOLDER/PATH'
        finds a file). An exact item name always wins; item names never
        hold '/'.

        Options:
          --to DIR      where to write the items (default: the current directory)
          --version N   version N of each item (see 'vault list --versions NAME')
          --at DATE     the version of each item that was current at DATE, as
                        for 'vault get'

        Examples:
          vault restore passport.pdf tax-2024.pdf
          vault restore '*.pdf' --to ~/restored
          vault restore photos.tar --to /mnt/backup
          vault restore notes.txt todo.txt --at '2026-11-01 09:00' --to /tmp/old
          vault restore Documents/notes/big-log.txt --to /tmp
        """

    let itemNames: [String]
    let directory: String
    let choice: VersionChoice

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemNames = try arguments.oneOrMore("NAME")
        choice = try VersionChoice(parsing: arguments)
        directory = try arguments.value(Self.toOption) ?? "."
        try arguments.requireExact(path: directory)
    }

    func run(_ context: Context) throws -> ExitCode {
        // Before the password: a target that cannot be written is known now.
        let status = (try? Syscall.status(of: directory, followLinks: true)) ?? nil
        if let status, !status.isDirectory { throw CLIError(message: "'\(directory)' is not a directory") }
        if status == nil { try PlaintextFiles.checkDirectory(PlaintextFiles.parent(of: directory), for: directory) }
        // Every NAME a plain name (no pattern) whose target already exists:
        // each would be skipped, so that is said now, with no prompt. The
        // target is known without the key: an item name never holds '/',
        // so a word with one is FOLDER/PATH and lands at DIR/its last part.
        if status != nil, let existing = existingTargets(), existing.count == itemNames.count {
            var hints: [String] = []
            for error in existing {
                context.terminal.report(CLIError(message: error.message, code: error.code))
                for h in error.hints where !hints.contains(h) { hints.append(h) }
            }
            return try summary(total: itemNames.count, skipped: itemNames, failure: nil, hints: hints, context)
        }
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: false)
        // Patterns choose items; --version/--at choose which version of each.
        // A path inside a folder item ("Documents/notes/a.txt") is one file of it.
        let inFolders = itemNames.compactMap { FolderFileArgument.split($0, in: vault) }
        let words = itemNames.filter { FolderFileArgument.split($0, in: vault) == nil }
        let files = try inFolders.map { try FolderFileArgument.target($0.item, $0.path, choice, in: vault, terminal: context.terminal) }
        let entries = try (words.isEmpty ? [] : vault.entries(selectedBy: words)).map { try choice.entry($0.name, in: vault) }
        if status == nil {
            try Syscall.mkdir(directory, mode: 0o700)
            context.terminal.note("created '\(directory)'")
        }
        // Targets that exist are skipped, each named once; the hint is given
        // once, in the summary. Other failures (damage, a full disk) are
        // reported as they happen, each with its own code.
        var skipped: [String] = []
        var failure: CLIError?
        var hints: [String] = []
        func failed(_ name: String, _ error: Error) {
            skipped.append(name)
            let report = ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory)
            if report.code == .exists {
                context.terminal.report(CLIError(message: report.message, code: report.code))
                for h in report.hints where !hints.contains(h) { hints.append(h) }
            } else {
                failure = failure ?? report
                context.terminal.report(report)
            }
        }
        for inFolder in files {
            let (folder, path): (ManifestEntry, String)
            switch inFolder {
            case .file(let f): (folder, path) = (f.folder, f.path)
            case .directory(let d): (folder, path) = (d.folder, d.path)
            }
            let name = folder.name + "/" + path
            let target = directory + "/" + (path.split(separator: "/").last.map(String.init) ?? path)
            do {
                var token: Interrupts.Token?
                defer { token.map(Interrupts.unregister) }
                switch inFolder {
                case .file(let file):
                    try vault.exportFile(file, to: target, partials: context.partialOutputs, partial: { temp in
                        token = Interrupts.register { UserFiles.erase(FilePath(temp)) }
                    })
                case .directory(let subtree):
                    let summary = try vault.restoreFolder(folder, subtree: subtree, to: target, partials: context.partialOutputs) { partial, stop in
                        token = Interrupts.register {
                            stop.stopAndWait(seconds: 5)
                            UserFiles.erase(partial)
                        }
                    }
                    Self.sayRefused(summary, name, context)
                }
                context.terminal.note("restored '\(name)' to '\(target)'")
            } catch {
                failed(name, error)
            }
        }
        // Many items: written nameless, named in groups, each group made
        // durable first (OutputGroups, VaultCore: the durability is the
        // library's, the words are ours).
        let groups = OutputGroups(directory: directory)
        for entry in entries {
            let target = directory + "/" + entry.name
            if let warning = Format.droppedWarning(entry) { context.terminal.warning(warning) }
            // Ctrl-C mid-write must not leave plaintext behind (where there
            // is no O_TMPFILE, the output has a temporary name).
            var token: Interrupts.Token?, inGroup = false
            defer { if !inGroup { token.map(Interrupts.unregister) } }
            do {
                if entry.kind == .folder {
                    groups.flush()   // the notes in the order of the items
                    let summary = try vault.restoreFolder(entry, to: target, partials: context.partialOutputs) { partial, stop in
                        token = Interrupts.register {
                            stop.stopAndWait(seconds: 5)   // the extraction erases what it wrote, then we make sure
                            UserFiles.erase(partial)
                        }
                    }
                    Self.sayRefused(summary, entry.name, context)
                } else if entries.count == 1 {
                    let progress = ProgressLine.start(context.terminal, "restoring \(entry.name)", total: entry.size)
                    defer { progress?.finish() }
                    try PlaintextFiles.export(entry, from: vault, to: target, context: context, progress: progress)
                } else {
                    let progress = ProgressLine.start(context.terminal, "restoring \(entry.name)", total: entry.size)
                    defer { progress?.finish() }
                    let output = try vault.exportUncommitted(entry, to: target, partials: context.partialOutputs, partial: { temp in
                        token = Interrupts.register { UserFiles.erase(FilePath(temp)) }
                    }, progress: progress?.update, keepAttributes: true)
                    inGroup = true   // unregistered once it is named
                    groups.add(output) { error in
                        token.map(Interrupts.unregister)
                        if let error { failed(entry.name, error) } else {
                            context.terminal.note("restored '\(entry.name)' to '\(target)'")
                        }
                    }
                    continue
                }
                context.terminal.note("restored '\(entry.name)' to '\(target)'")
            } catch {
                failed(entry.name, error)
            }
        }
        try groups.finish()
        return try summary(total: files.count + entries.count, skipped: skipped, failure: failure, hints: hints, context)
    }

    /// The "already exists" error of each NAME whose target exists, when
    /// every NAME is a plain name; nil if any is a pattern.
    private func existingTargets() -> [CLIError]? {
        var errors: [CLIError] = []
        for name in itemNames {
            guard !NamePattern.isPattern(name), let last = name.split(separator: "/").last else { return nil }
            do { try PlaintextFiles.checkTarget(directory + "/" + last) } catch where error.code == .exists {
                errors.append(error)
            } catch {}
        }
        return errors
    }

    /// The end of a restore: exit 0, or the skipped items named once.
    private func summary(total: Int, skipped: [String], failure: CLIError?, hints: [String], _ context: Context) throws -> ExitCode {
        guard !skipped.isEmpty else { return .ok }
        let restored = total - skipped.count
        // One item that failed for a reason of its own has said all there is.
        if total == 1, let failure { throw ReportedError(failure.code) }
        context.terminal.warning("restored \(Format.count(restored, "item")); skipped \(Format.count(skipped.count, "item")): "
                                 + skipped.map { "'\($0)'" }.joined(separator: ", "), hints: hints)
        // Nothing restored and a real failure: that failure's code; else
        // partial (3), the man page's rule for anything skipped.
        if restored == 0, let failure { throw ReportedError(failure.code) }
        return .partial
    }

    /// Extended attributes a folder's restore could not set: one line per
    /// namespace, never per file (the folder itself is restored).
    static func sayRefused(_ summary: ArchiveSummary, _ name: String, _ context: Context) {
        for (namespace, refused) in summary.attributesRefused.sorted(by: { $0.key < $1.key }) {
            context.terminal.warning("'\(Terminal.printable(name))': the \(Terminal.printable(namespace)).* extended attributes of "
                                     + "\(Format.count(refused.entries, "entry", "entries")) were not restored: \(refused.reason)",
                                     hints: namespace == "security" || namespace == "trusted" ? ["as root they are (file capabilities, SELinux labels)"] : [])
        }
    }
}

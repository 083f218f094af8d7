import Foundation
import Dispatch
import System
import VaultCore

/// `vault open`: edit an item in a private scratch copy, save it back if changed.
struct OpenCommand: Command {
    static let name = "open"
    static let abstract = "edit an item in a private copy, then re-encrypt it"
    static let withOption = ValueOption<String>.text("--with", as: "CMD")
    static let options = [withOption.spec]
    static let help = """
        Usage: vault open NAME [--with CMD]

        Decrypts a private copy of the item NAME (a whole item, not a
        FOLDER/PATH) into a scratch directory only you can read, runs CMD
        on it and waits. If the copy changed, it is encrypted back under a
        new key as the item's newest version (the older versions
        stay: see 'vault list --versions' and 'vault forget'); then every copy is erased
        (overwritten, then deleted), also when CMD fails or saving fails.
        The copy stays in memory where it can: under $XDG_RUNTIME_DIR when
        that exists, else under /dev/shm; else it goes inside the vault, on
        disk, and vault says so before CMD starts.

        CMD runs through /bin/sh with the copy's path appended as its last
        argument, as editors are run. Without --with: $VISUAL, then $EDITOR,
        then vi (for a folder: $SHELL, started inside it). A changed copy is
        never thrown away without asking: if CMD exits with a non-zero status
        after changing it, vault asks on the terminal whether to save it,
        edit again, or discard it (with no terminal, it is discarded). An
        editor that returns at once (a GUI editor without its --wait option)
        is waited for: vault asks you to press Enter when you have finished.
        While CMD runs this process holds the vault's writer lock; other
        writers wait (exit 11), 'vault add' and reads still work. If vault is
        killed, the next vault command erases the copy.

        Options:
          --with CMD   the command to run on the copy

        Examples:
          vault open notes.txt
          VISUAL='code --wait' vault open notes.txt
          vault open budget.ods --with libreoffice
          vault open todo.txt --with 'sed -i s/TODO/DONE/'
        """

    let itemName: String
    let with: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemName = try arguments.exactly("NAME")[0]
        with = try arguments.value(Self.withOption)
    }

    /// An editor that returns sooner than this without a change has likely
    /// handed the file to a window of its own and not waited for it.
    static let quickReturn: UInt64 = 1_000_000_000

    func run(_ context: Context) throws -> ExitCode {
        // Before the password: item names never hold '/', so this is a path
        // inside a folder item, which open does not edit on its own.
        if let (folder, path) = FolderFile.split(itemName) {
            throw CLIError(message: "'vault open' edits whole items: '\(itemName)' is '\(path)' inside the folder item '\(folder)'",
                           hints: ["'vault open \(folder)' opens the folder in a shell; 'vault get \(itemName) -o FILE' writes that file out"],
                           code: .noSuchItem)
        }
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: true)
        let entry = try vault.entry(named: itemName)
        if let warning = Format.droppedWarning(entry) { context.terminal.warning(warning) }
        let folder = entry.kind == .folder
        // A folder opens in a shell started inside it; a file in the editor,
        // chosen as git does.
        let editor = with
            ?? (folder ? context.environment.nonEmpty("SHELL") ?? "/bin/sh"
                       : context.environment.nonEmpty("VISUAL") ?? context.environment.nonEmpty("EDITOR") ?? "vi")
        let scratch = try Self.scratch(vault.vault.paths.root, context)
        let token = Interrupts.register { scratch.erase() }
        defer { scratch.erase(); Interrupts.unregister(token) }
        let copy = scratch.path + "/" + entry.name
        if folder { try vault.restoreFolder(entry, to: copy) } else { try vault.export(entry, to: copy) }
        let before = try TreeFingerprint.of(copy)
        // A bare shell prompt says nothing of where it is: say it once
        // (issue 29, item 15).
        if with == nil && folder {
            context.terminal.note("a shell in a private copy of '\(Terminal.printable(entry.name))': "
                                  + "'exit' saves what you changed into the vault and erases the copy",
                                  hint: "a non-zero exit ('exit 1') asks whether to keep the changes")
        }

        var changed = false
        while true {
            let started = DispatchTime.now().uptimeNanoseconds
            let pid = with == nil && folder
                ? try Syscall.spawnShell(editor, arguments: [], directory: copy)
                : try Syscall.spawnShell(editor, arguments: [copy], directory: nil)
            let status = try Syscall.wait(pid)
            let quick = DispatchTime.now().uptimeNanoseconds - started < Self.quickReturn
            changed = try TreeFingerprint.of(copy) != before
            if status != .exited(0) {
                guard changed else {
                    throw CLIError(message: "'\(editor)' \(status.description); nothing was changed or saved",
                                   hints: ["the stored item is unchanged and the private copy was erased"])
                }
                switch try Self.askAfterFailure(editor, status, context) {
                case .save: break
                case .editAgain: continue
                case .discard:
                    throw CLIError(message: "'\(editor)' \(status.description); the changes were discarded",
                                   hints: ["the stored item is unchanged and the private copy was erased"])
                }
            } else if !changed && quick && !folder && with == nil {
                // xdg-open, `code` without --wait: the window may still be open.
                context.terminal.note("'\(editor)' returned at once; it may still have the copy open",
                                      hint: "an editor that opens its own window needs its wait option, e.g. VISUAL='code --wait'")
                if try context.terminal.askLine("press Enter when you have saved and closed it: ", limit: 256) != nil {
                    changed = try TreeFingerprint.of(copy) != before
                }
            }
            break
        }
        guard changed else {
            context.terminal.note("'\(entry.name)' unchanged")
            return .ok
        }
        do {
            let now = Int64(Date().timeIntervalSince1970)
            if folder {
                try vault.saveFolderVersion(of: entry, from: copy, now: now)
            } else {
                let source = try FileHandleFD(readingFrom: copy)
                try vault.saveFileVersion(of: entry, from: source, now: now)
            }
        } catch {
            let report = ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory)
            throw CLIError(message: "saving '\(entry.name)' failed: \(report.message); the stored item is unchanged",
                           hints: report.hints, code: report.code)
        }
        context.terminal.note("saved the changes to '\(entry.name)'")
        return .ok
    }

    /// The first scratch base that is safe (`Scratch.candidates`), with a
    /// warning before any plaintext is written when it is on disk.
    static func scratch(_ vaultRoot: String, _ context: Context) throws -> Scratch {
        let candidates = Scratch.candidates(vaultRoot: vaultRoot, environment: context.environment)
        for (i, base) in candidates.enumerated() {
            let last = i == candidates.count - 1
            if base == Scratch.onDisk(vaultRoot) {
                context.terminal.warning("the private copy goes to disk, in '\(base)': there is no $XDG_RUNTIME_DIR or usable /dev/shm",
                                         hints: ["it is overwritten and deleted afterwards, but a disk may keep old blocks"])
            }
            do { return try Scratch(base: base) } catch VaultError.unsafeScratch where !last {
                continue
            }
        }
        throw VaultError.unsafeScratch(vaultRoot)   // not reached: the last candidate throws its own error
    }

    enum Choice { case save, editAgain, discard }

    /// The editor failed after changing the copy: the user decides. No
    /// terminal to ask: discard, as documented (a script's failing command
    /// must not save half its work).
    static func askAfterFailure(_ editor: String, _ status: Termination, _ context: Context) throws -> Choice {
        context.terminal.warning("'\(editor)' \(status.description), but the copy was changed")
        while true {
            guard let answer = try context.terminal.askLine("save the changes, edit again, or discard them? [s/e/d] ", limit: 16) else {
                return .discard
            }
            switch answer.lowercased() {
            case "s", "save": return .save
            case "e", "edit": return .editAgain
            case "d", "discard": return .discard
            default: continue
            }
        }
    }
}

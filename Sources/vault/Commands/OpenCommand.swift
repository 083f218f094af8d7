import Foundation
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

        Decrypts a private copy of NAME into a scratch directory only you can
        read (under $XDG_RUNTIME_DIR when it exists, else inside the vault),
        runs CMD on it and waits. If the copy changed, it is encrypted back
        under a new key as the item's newest version (the older versions stay:
        see 'vault list --versions' and 'vault forget'); then every copy is erased
        (overwritten, then deleted), also when CMD fails or saving fails.

        CMD runs through /bin/sh with the copy's path appended as its last
        argument, as editors are run. Without --with: $VISUAL, then $EDITOR,
        then xdg-open. CMD exiting with a non-zero status means "discard":
        nothing is saved. While CMD runs this process holds the vault's writer
        lock; other writers wait (exit 11), 'vault add' and reads still work.
        If vault is killed, the next vault command erases the copy.

        Options:
          --with CMD   the command to run on the copy

        Examples:
          vault open notes.txt
          vault open budget.ods --with libreoffice
          vault open todo.txt --with 'sed -i s/TODO/DONE/'
        """

    let itemName: String
    let with: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemName = try arguments.exactly("NAME")[0]
        with = try arguments.value(Self.withOption)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: true)
        let entry = try vault.entry(named: itemName)
        let folder = entry.kind == .folder
        // A folder opens in a shell started inside it; a file in the editor.
        let editor = with
            ?? (folder ? context.environment.nonEmpty("SHELL") ?? "/bin/sh"
                       : context.environment.nonEmpty("VISUAL") ?? context.environment.nonEmpty("EDITOR") ?? "xdg-open")
        let scratch = try Scratch(base: Scratch.base(vaultRoot: vault.vault.paths.root, environment: context.environment))
        let token = Interrupts.register { scratch.erase() }
        defer { scratch.erase(); Interrupts.unregister(token) }
        let copy = scratch.path + "/" + entry.name
        if folder { try vault.restoreFolder(entry, to: copy) } else { try vault.export(entry, to: copy) }
        let before = try TreeFingerprint.of(copy)

        let pid = with == nil && folder
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
                try vault.saveFolderVersion(of: entry, from: copy, now: now)
            } else {
                let source = try FileHandleFD(readingFrom: copy)
                try vault.saveVersion(of: entry, flags: [], now: now) { writer in (try writer.consume(source), 1) }
            }
        } catch {
            let report = ErrorReport.cliError(for: error, vaultDirectory: context.vaultDirectory)
            throw CLIError(message: "saving '\(entry.name)' failed: \(report.message); the stored item is unchanged",
                           hints: report.hints, code: report.code)
        }
        context.terminal.note("saved the changes to '\(entry.name)'")
        return .ok
        }

}

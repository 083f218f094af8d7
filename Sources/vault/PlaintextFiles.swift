import System
import VaultCore

/// Plaintext written where the user says (`get -o`, `restore`), never left
/// half-written: nameless until complete where the file system allows, else
/// erased by an interrupt, and recorded so the next command erases what a
/// kill left.
enum PlaintextFiles {
    /// Writes an item to a new file.
    static func export(_ entry: ManifestEntry, from vault: UnlockedVault, to path: String, context: Context,
                       progress: ProgressLine? = nil) throws {
        var token: Interrupts.Token?
        defer { token.map(Interrupts.unregister) }
        try vault.export(entry, to: path, partials: context.partialOutputs, partial: { temp in
            token = Interrupts.register { UserFiles.erase(FilePath(temp)) }
        }, progress: progress?.update, keepAttributes: true)
    }

    /// What would make writing `path` fail, checked before the password is
    /// asked and Argon2id runs: it exists (vault never overwrites), or its
    /// directory does not. The write itself still refuses an existing file
    /// (O_EXCL), so a file created in between is not overwritten either.
    static func checkTarget(_ path: String) throws(CLIError) {
        if (try? Syscall.status(of: path)) ?? nil != nil {
            throw CLIError(message: "'\(path)' already exists", hints: ["vault never overwrites; choose another name"],
                           code: .exists)
        }
        try checkDirectory(parent(of: path), for: path)
    }

    /// `path`'s directory as written ("." for a bare name).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func checkDirectory(_ directory: String, for path: String) throws(CLIError) {
        let status = (try? Syscall.status(of: directory, followLinks: true)) ?? nil
        guard let status else {
            throw CLIError(message: "cannot write '\(path)': there is no directory '\(directory)'")
        }
        guard status.isDirectory else {
            throw CLIError(message: "cannot write '\(path)': '\(directory)' is not a directory")
        }
    }
}

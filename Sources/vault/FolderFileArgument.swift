import VaultCore

/// `get`/`restore` of ITEM/PATH: one file inside a folder item. The rule:
/// a word that is an item's exact name (or, for restore, a pattern) means
/// that item; only a word that names no item, and whose part before the
/// first '/' does, is a path inside that item. Item names never hold '/',
/// so the two cannot both apply, but the order is the rule all the same.
enum FolderFileArgument {
    /// (item, path) when `word` is such a path; nil when it means an item,
    /// or nothing at all (the caller's "no item named" then names it whole).
    static func split(_ word: String, in vault: UnlockedVault) -> (item: String, path: String)? {
        guard (try? vault.entry(named: word)) == nil, let (item, path) = FolderFile.split(word),
              (try? vault.entry(named: item)) != nil else { return nil }
        return (item, path)
    }

    /// The file at `path` in the version of folder item `item` that `choice` picks.
    static func file(_ item: String, _ path: String, _ choice: VersionChoice, in vault: UnlockedVault,
                     terminal: Terminal) throws -> FolderFile {
        try vault.file(at: path, in: folder(item, path, choice, in: vault, terminal: terminal))
    }

    /// The file or directory at `path` (restore).
    static func target(_ item: String, _ path: String, _ choice: VersionChoice, in vault: UnlockedVault,
                       terminal: Terminal) throws -> FolderPathTarget {
        try vault.target(at: path, in: folder(item, path, choice, in: vault, terminal: terminal))
    }

    private static func folder(_ item: String, _ path: String, _ choice: VersionChoice, in vault: UnlockedVault,
                               terminal: Terminal) throws -> ManifestEntry {
        let folder = try choice.entry(item, in: vault)
        guard folder.kind == .folder else {
            throw CLIError(message: "'\(item)' is a file item, not a folder: there is no '\(path)' inside it",
                           hints: ["'vault get \(item)' writes it"], code: .noSuchItem)
        }
        if let warning = Format.droppedWarning(folder) { terminal.warning(warning) }
        return folder
    }
}

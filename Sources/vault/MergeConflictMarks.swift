import System
import VaultCore

/// The items a merge kept in conflict, remembered on this machine so that
/// `vault list` marks them until the user acts (issue 43, item 2). One
/// line per conflict in `remote.conflicts` (machine-local like the other
/// `remote.*` files, erased with them by `move`): the item id that was
/// current under the name, a tab, the name. A conflict is settled as soon
/// as that id is no longer the current version under that name: a new
/// version, a rename or a removal.
enum MergeConflictMarks {
    static func path(_ vault: String) -> String { VaultPaths(root: vault).root + "/remote.conflicts" }

    /// (item id hex, name) of each remembered conflict; at most 10,000.
    static func read(vault: String) -> [(id: String, name: String)] {
        // Absent, unreadable or too long: no marks (only `list`'s words depend on them).
        guard let data = try? VaultDirectory.readFile(path(vault), limit: 16 << 20) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").prefix(10_000).compactMap { line in
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 32 else { return nil }
            return (String(parts[0]), String(parts[1]))
        }
    }

    static func write(vault: String, _ marks: [(id: String, name: String)]) {
        if marks.isEmpty { try? Syscall.unlink(path(vault)); return }   // none: no file (absent is fine)
        let text = marks.map { "\($0.id)\t\($0.name)\n" }.joined()
        // Only `list`'s mark depends on it: one that cannot be written is a mark not shown.
        try? VaultDirectory.atomicWrite(Array(text.utf8), to: path(vault))
    }

    /// Adds the conflicts named, each with the id now current under its name.
    static func record(vault: String, names: [String], in manifest: Manifest) {
        var marks = read(vault: vault)
        for name in names {
            guard let current = manifest.versions(named: name).last, !name.contains("\n"), !name.contains("\t") else { continue }
            let id = Hex.encode(current.itemID)
            if !marks.contains(where: { $0.id == id && $0.name == name }) { marks.append((id, name)) }
        }
        write(vault: vault, marks)
    }

    /// The conflicts still open in `manifest`; the settled ones are forgotten.
    static func open(vault: String, in manifest: Manifest) -> [String] {
        let marks = read(vault: vault)
        guard !marks.isEmpty else { return [] }
        let still = marks.filter { mark in manifest.versions(named: mark.name).last.map { Hex.encode($0.itemID) == mark.id } ?? false }
        if still.count != marks.count { write(vault: vault, still) }
        return still.map(\.name)
    }
}

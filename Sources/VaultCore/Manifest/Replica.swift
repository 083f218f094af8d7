import System
import VaultCrypto

// Which copy of the vault this directory is (docs/FORMAT.md, "Vault
// layout", `replica`):
//
//   "vault replica v1\n" || 32 hex (replica id) || " " || device || " " || inode || "\n"
//
// device and inode (decimal) are the vault directory's own. A manifest's
// history (ManifestHistory.swift) counts writes per replica id, so two
// copies that write must never share one. The id is kept with the
// identity of the directory it was made in: a copy made any other way
// (`cp -r`, rsync, a backup put back elsewhere, `move receive`, `clone`)
// sits in another directory, finds the file not its own, and makes an id
// of its own at its first write. Not secret; not carried by a move.

package enum Replica {
    static let firstLine = "vault replica v1"

    static func path(_ paths: VaultPaths) -> String { paths.replica }

    /// This directory's replica id: the one in `replica` if that was made
    /// for this very directory, else a new random one, written (atomically)
    /// before it is used.
    package static func id(_ paths: VaultPaths) throws -> [UInt8] {
        guard let dir = try Syscall.status(of: paths.root), dir.kind == .directory else {
            throw VaultError.unsafeVaultPath(paths.root)
        }
        if let kept = read(paths), kept.device == dir.device, kept.inode == dir.inode { return kept.id }
        let id = SecureRandom.bytes(ManifestHistory.replicaLength)
        let text = "\(firstLine)\n\(Hex.encode(id)) \(dir.device) \(dir.inode)\n"
        try VaultDirectory.atomicWrite(Array(text.utf8), to: path(paths))
        return id
    }

    /// The file's fields; nil when it is absent or not of this exact shape
    /// (then a new id is made: a copy never reuses a damaged one's).
    static func read(_ paths: VaultPaths) -> (id: [UInt8], device: UInt64, inode: UInt64)? {
        // Absent, unreadable or too long all mean "none kept": a new id costs
        // one more history entry, never a wrong decision.
        guard let raw = try? VaultDirectory.readFile(path(paths), limit: 128),
              let text = String(validating: raw, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0] == Substring(firstLine), lines[2].isEmpty else { return nil }
        let fields = lines[1].split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0].utf8.count == 32, let id = Hex.decode(String(fields[0])),
              Hex.encode(id) == fields[0], let device = UInt64(fields[1]), let inode = UInt64(fields[2]),
              String(device) == fields[1], String(inode) == fields[2] else { return nil }
        return (id, device, inode)
    }
}

import System
import VaultCore

/// Blobs a merge kept as ours where the remote holds another item under
/// the same id (RemoteMerge.settleClaimedIDs: a pack of ours that serves
/// the snapshots, over a forgery that does not). The remote's blob is the
/// forgery's and may have our blob's size, which is all a push compares:
/// the next push uploads these whatever their size, and forgets them once
/// its manifest has landed. Machine-local, in `remote.<NAME>.claimed`:
///
///     "vault claimed v1\n" || (32 hex digits "\n")*
///
/// Unreadable or of another shape, it counts as empty: the blob is then
/// uploaded only if its size differs, and a pull that stages the
/// remote's copy refuses it (read through under our entry) until it is
/// put right.
public enum RemoteClaims {
    static let firstLine = "vault claimed v1"
    static let maxListed = 100_000

    static func path(_ vault: String, _ name: String) -> String { VaultPaths(root: vault).root + "/remote.\(name).claimed" }

    /// The ids (hex) to upload whatever the remote's size says.
    static func ids(vault: String, remote name: String) -> Set<String> {
        guard let raw = try? VaultDirectory.readFile(path(vault, name), limit: 64 + 33 * maxListed) else { return [] }
        var lines = String(decoding: raw, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(firstLine), lines.last == "" else { return [] }
        lines.removeFirst(); lines.removeLast()
        guard lines.allSatisfy({ RemoteNames.isItemID($0) }) else { return [] }
        return Set(lines.map(String.init))
    }

    static func add(_ new: [String], vault: String, remote name: String) throws {
        let all = ids(vault: vault, remote: name).union(new)
        let text = ([firstLine] + all.sorted().suffix(maxListed)).map { $0 + "\n" }.joined()
        try VaultDirectory.atomicWrite(Array(text.utf8), to: path(vault, name))
    }

    /// After a push whose manifest landed: every one went up.
    static func clear(vault: String, remote name: String) throws {
        let p = path(vault, name)
        if try Syscall.status(of: p) != nil { try Syscall.unlink(p) }
    }
}

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
        IDListFile.read(path(vault, name), firstLine: firstLine, max: maxListed)
    }

    static func add(_ new: [String], vault: String, remote name: String) throws {
        try IDListFile.write(ids(vault: vault, remote: name).union(new), to: path(vault, name), firstLine: firstLine, max: maxListed)
    }

    /// After a push whose manifest landed: every one went up.
    static func clear(vault: String, remote name: String) throws {
        try IDListFile.write([], to: path(vault, name), firstLine: firstLine, max: maxListed)
    }
}

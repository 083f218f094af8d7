import System
import VaultCore
import VaultCrypto

/// What a machine's storage credentials let it do to a remote's inbox
/// (issue 41), learned by trying it on a scratch name, `inbox/.probe-<32
/// hex>`: create it, delete it, else write it again. A host that can neither
/// overwrite nor delete is append-only: ransomware there cannot destroy a
/// backup. A probe that could not be deleted stays behind as a stray, which
/// the owner's pull deletes after a day (RemoteStrays).
///
/// The answer is rclone's: on S3, rclone reads an object (HEAD) before it
/// deletes it, so a host that may write but not read is reported unable
/// to delete even where a bare DELETE would succeed; the overwrite tried
/// first is a bare PUT, which is how SeaweedFS's one "Write" right shows.
public enum RemoteRights: String, Sendable {
    case appendOnly = "append-only"
    case canDestroy = "can-delete"

    public static func probe(target: String, rclone: Rclone) throws -> RemoteRights {
        let name = ".probe-" + Hex.encode(SecureRandom.bytes(16))
        let inbox = RemoteNames.join(target, "inbox")
        try rclone.uploadBytes(Array("vault rights probe\n".utf8), as: name, to: inbox)
        // Deleted: that is the answer (and nothing is left behind).
        if (try? rclone.deleteExisting(name, in: inbox)) != nil { return .canDestroy }
        let overwrites = (try? rclone.uploadBytes(Array("vault rights probe, again\n".utf8), as: name, to: inbox)) != nil
        return overwrites ? .canDestroy : .appendOnly
    }

    static func path(_ vault: String, _ name: String) -> String { VaultPaths(root: vault).root + "/remote.\(name).rights" }

    /// What `remote add` learned for this machine (machine-local
    /// `remote.<NAME>.rights`: "vault rights v1\n" || value || "\n"); nil: not known.
    public static func remembered(vault: String, remote name: String) -> RemoteRights? {
        guard let bytes = try? VaultDirectory.readFile(path(vault, name), limit: 64) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.count == 2, lines[0] == "vault rights v1" else { return nil }
        return RemoteRights(rawValue: String(lines[1]))
    }

    public static func remember(_ rights: RemoteRights, vault: String, remote name: String) throws {
        try VaultDirectory.atomicWrite(Array("vault rights v1\n\(rights.rawValue)\n".utf8), to: path(vault, name))
    }
}

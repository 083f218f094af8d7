import ByteLayout
import System
import VaultCore

/// What this vault remembers of the last state it shared with a remote
/// (docs/FORMAT.md, "Merge base"), so a merge knows what each side changed
/// since:
///
///     remote.<NAME>.base   the manifest file both last held, byte for byte
///                          (sealed and authenticated as every manifest)
///     remote.<NAME>.merging  u64be(merged generation) || theirs: only
///                          while a merged manifest is being written
///     remote.<NAME>.inbox  "vault inbox v1\n" || (32 hex item id "\n")*:
///                          drop-ins that passed between this vault and
///                          that remote's inbox (a push sent them, or a
///                          pull took them), so each goes up once, comes
///                          in once, and is known as shared once gone there
///     remote.<NAME>.older  "vault older v1\n" || (64 hex identity "\n")*:
///                          manifests (ManifestPrefix.identity) this
///                          vault's descends from, older than the base:
///                          the bases before it, and an older copy a pull
///                          proved ours contains; a push puts ours over
///                          one of them (an older copy put back there)
///
/// Both written atomically. The base is written before `remotes` records
/// the generation it goes with, so after a kill the base is never older
/// than KNOWN says, only (harmlessly) newer. A sent id is written to
/// `.inbox` only after its drop-in is whole on the remote, a taken one
/// after it is whole in our inbox: an id recorded but in neither place
/// would read as "taken in and removed elsewhere" and be dropped.
public enum RemoteBase {
    static let listFirstLine = "vault inbox v1"
    /// At most this many ids in `.inbox` (33 bytes of file each).
    static let maxListed = 100_000

    static func basePath(_ vault: String, _ name: String) -> String { VaultPaths(root: vault).root + "/remote.\(name).base" }
    static func seenPath(_ vault: String, _ name: String) -> String { VaultPaths(root: vault).root + "/remote.\(name).seen" }

    /// Remembers that every drop-in in the remote's inbox at `time` (taken
    /// before its listing) is here now: prune, when it cannot see that
    /// inbox, deletes only what was past its grace by then.
    static func recordSeen(vault: String, remote name: String, at time: Int64) {
        // Lost, the record is older than it could be: prune only keeps more.
        try? VaultDirectory.atomicWrite(Array("vault seen v1\n\(time)\n".utf8), to: seenPath(vault, name))
    }

    /// When the remote's inbox was last seen whole (0: never).
    public static func seen(vault: String, remote name: String) -> Int64 {
        // Unreadable or of another shape: as never seen, the safe side.
        guard let bytes = try? VaultDirectory.readFile(seenPath(vault, name), limit: 64) else { return 0 }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.count == 2, lines[0] == "vault seen v1", let time = Int64(lines[1]), time >= 0 else { return 0 }
        return time
    }
    static func listPath(_ vault: String, _ name: String) -> String { VaultPaths(root: vault).root + "/remote.\(name).inbox" }

    /// The base manifest file's bytes (nil: none kept yet). Authenticated
    /// only when the caller opens it with the vault's key. Vault before
    /// 2026-12 renamed the whole `.merging` file over the base, so a base
    /// may still start with its 8-byte generation: read past it.
    public static func read(vault: String, remote name: String) throws -> [UInt8]? {
        let path = basePath(vault, name)
        guard try Syscall.status(of: path) != nil else { return nil }
        let bytes = try VaultDirectory.readFile(path, limit: Manifest.maxFileSize + 8)
        let magic = Manifest.magic
        if !bytes.starts(with: magic), bytes.count > 8 + magic.count, bytes.dropFirst(8).starts(with: magic) {
            return Array(bytes.dropFirst(8))
        }
        return bytes
    }

    /// Remembers `manifest` (a manifest file's bytes) as the base, unless
    /// it is already; the base it replaces joins the older ones (each base
    /// descends from the one before it: see FORMAT.md, "Merge base").
    public static func write(_ manifest: [UInt8], vault: String, remote name: String) throws {
        // A base that cannot be read is none: nothing older to remember.
        let kept = try? read(vault: vault, remote: name)
        if kept == manifest { return }
        if let kept, let identity = try? ManifestPrefix.identity(of: kept) { try addOlder([identity], vault: vault, remote: name) }
        try VaultDirectory.atomicWrite(manifest, to: basePath(vault, name))
    }

    static let olderFirstLine = "vault older v1"
    /// At most this many older identities (the newest kept; 65 bytes each).
    static let maxOlder = 1_000
    static func olderPath(_ vault: String, _ name: String) -> String { VaultPaths(root: vault).root + "/remote.\(name).older" }

    /// The identities of manifests older than the base that this vault's
    /// own descends from. A damaged file reads as empty: a push then needs
    /// a pull first, never the reverse.
    public static func older(vault: String, remote name: String) -> [String] {
        guard let raw = try? VaultDirectory.readFile(olderPath(vault, name), limit: 64 + 65 * maxOlder),
              let text = String(validating: raw, as: UTF8.self) else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(olderFirstLine), lines.last == "" else { return [] }
        lines.removeFirst(); lines.removeLast()
        guard lines.allSatisfy({ $0.utf8.count == 64 && Hex.decode(String($0)) != nil }) else { return [] }
        return lines.map(String.init)
    }

    /// Appends identities to the older ones (the oldest go past `maxOlder`).
    public static func addOlder(_ identities: [String], vault: String, remote name: String) throws {
        var all = older(vault: vault, remote: name)
        let fresh = identities.filter { !all.contains($0) }
        guard !fresh.isEmpty else { return }
        all = Array((all + fresh).suffix(maxOlder))
        let text = ([olderFirstLine] + all).map { $0 + "\n" }.joined()
        try VaultDirectory.atomicWrite(Array(text.utf8), to: olderPath(vault, name))
    }

    /// The ids (hex) of drop-ins that passed between this vault and the
    /// remote's inbox. A damaged file reads as empty: then a drop-in taken
    /// in and removed elsewhere may come back here (never one lost).
    public static func dropIns(vault: String, remote name: String) -> Set<String> {
        IDListFile.read(listPath(vault, name), firstLine: listFirstLine, max: maxListed)
    }

    /// Replaces the list (the file goes when it is empty).
    public static func setDropIns(_ ids: Set<String>, vault: String, remote name: String) throws {
        try IDListFile.write(ids, to: listPath(vault, name), firstLine: listFirstLine, max: maxListed)
    }

    /// Adds ids to the list.
    public static func addDropIns(_ ids: some Sequence<String>, vault: String, remote name: String) throws {
        let listed = dropIns(vault: vault, remote: name)
        let all = listed.union(ids)
        if all.count != listed.count { try setDropIns(all, vault: vault, remote: name) }
    }

    static func mergingPath(_ vault: String, _ name: String) -> String { VaultPaths(root: vault).root + "/remote.\(name).merging" }

    /// Before a merged manifest of generation `generation` is written:
    /// theirs (`manifest`, a manifest file) is to become the base once it
    /// is. `remote.NAME.merging` = u64be(generation) || manifest.
    static func beginMerge(theirs manifest: [UInt8], generation: UInt64, vault: String, remote name: String) throws {
        var w = ByteWriter(capacity: 8 + manifest.count)
        w.u64(generation)
        w.bytes(manifest)
        try VaultDirectory.atomicWrite(w.bytes, to: mergingPath(vault, name))
    }

    /// After the merged manifest is written: theirs becomes the base, and
    /// the mark goes. Theirs only, without the mark's generation in front
    /// (a base that does not open counts as none: the next merge would take
    /// nothing as removed). A kill between the two leaves the mark, which
    /// settleMerge writes as the base again.
    static func finishMerge(vault: String, remote name: String) throws {
        let path = mergingPath(vault, name)
        try promote(mark: VaultDirectory.readFile(path, limit: Manifest.maxFileSize + 8), at: path, vault: vault, remote: name)
    }

    /// Theirs (the mark's bytes after its 8-byte generation) becomes the
    /// base, then the mark at `path` goes: finishMerge, and settleMerge
    /// for a merge a kill left written.
    private static func promote(mark bytes: [UInt8], at path: String, vault: String, remote name: String) throws {
        try VaultDirectory.atomicWrite(Array(bytes.dropFirst(8)), to: basePath(vault, name))
        try Syscall.unlink(path)
        try Syscall.fsyncDirectory(VaultPaths(root: vault).root)
    }

    /// A merge a kill interrupted: written (the local generation reached
    /// the merged one) or not. Returns the generation of theirs when it was
    /// (the caller records it as K), nil when there was none or it was not.
    static func settleMerge(localGeneration: UInt64, vault: String, remote name: String) throws -> UInt64? {
        let path = mergingPath(vault, name)
        guard try Syscall.status(of: path) != nil else { return nil }
        let bytes = try VaultDirectory.readFile(path, limit: Manifest.maxFileSize + 8)
        var prefix = ByteReader(bytes)
        let merged = (try? prefix.u64()) ?? .max
        guard localGeneration >= merged, let theirs = try? ManifestPrefix.generation(of: Array(bytes.dropFirst(8))) else {
            try Syscall.unlink(path)
            return nil
        }
        try promote(mark: bytes, at: path, vault: vault, remote: name)
        return theirs
    }

    /// Forgets everything about the remote (`remote remove`).
    public static func remove(vault: String, remote name: String) throws {
        for path in [basePath(vault, name), listPath(vault, name), mergingPath(vault, name), olderPath(vault, name),
                     seenPath(vault, name), RemoteStrays.path(vault, name), RemoteRights.path(vault, name),
                     RemoteClaims.path(vault, name)]
        where try Syscall.status(of: path) != nil {
            try Syscall.unlink(path)
        }
    }
}

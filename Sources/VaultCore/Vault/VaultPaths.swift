// The vault on disk (docs/FORMAT.md, "Layout"):
//
//   DIR/vault.header      the header (VaultHeader.swift), written last at init
//   DIR/manifest          the encrypted manifest (Manifest.swift)
//   DIR/items/<id hex>    one sealed item per stored item (ItemCipher.swift)
//   DIR/inbox/<id>.item   a drop-in's sealed content
//   DIR/inbox/<id>.env    its envelope (DropInEnvelope.swift), written last
//   DIR/inbox/<id>.fx     a folder drop-in's index, written between (DroppedFolderIndex.swift)
//   DIR/lock              the writers' flock
//   DIR/owner.lock        the drop lock: 0600 always; held shared by the owner's adds
//                         and backups, exclusively by rekey and prune (DropLock.swift)
//   DIR/drop.fence        there while rekey or prune decides (0644); other users'
//                         drop-ins wait while it stands (DropLock.swift)
//   DIR/attempts          the wrong-password delay state (AttemptThrottle.swift)
//   DIR/rekey.pending     a rekey's new header and manifest (RekeySwitch.swift)
//   DIR/quarantine/       what `check --repair` set aside (orphans, drop-ins that do not open)
//   DIR/replica           which copy of the vault this directory is (Replica.swift)
//   DIR/notes/<name hex>  what prune tells one host's backups about repacks (RepackNote.swift)
//   DIR/indexes/<name hex> where a folder item's files lie in its archive (FolderIndexFile.swift)
//   .tmp-<hex>            a file being written, in the directory it will land in
//
// Directories are 0700, files 0600. Any of these paths being a symbolic link
// makes the vault refuse to open.

public struct VaultPaths: Sendable {
    public let root: String
    /// Trailing slashes are dropped: lstat("link/") follows the link, which
    /// would let a symbolic link to a vault pass the refusal.
    public init(root: String) {
        var r = Substring(root)
        while r.count > 1, r.hasSuffix("/") { r.removeLast() }
        self.root = String(r)
    }
    public var header: String { root + "/vault.header" }
    public var manifest: String { root + "/manifest" }
    public var items: String { root + "/items" }
    public var inbox: String { root + "/inbox" }
    public var lock: String { root + "/lock" }
    /// The drop lock: the owner's processes' only (DropLock.swift).
    public var dropLock: String { root + "/owner.lock" }
    /// What other users wait for while rekey or prune decides.
    public var dropFence: String { root + "/drop.fence" }
    /// Where versions before issue 38 kept the drop lock (0644 once shared,
    /// which let any user stall the owner): no longer used; `vault share` removes it.
    public var legacyDropLock: String { root + "/drop.lock" }
    public var attempts: String { root + "/attempts" }
    public var rekeyPending: String { root + "/rekey.pending" }
    public var rekeyProgress: String { root + "/rekey.progress" }
    public var quarantine: String { root + "/quarantine" }
    /// Which copy of the vault this directory is (Replica.swift): the machine's, never moved.
    public var replica: String { root + "/replica" }
    /// Repack notes, one per host's piece key (VaultBackup's RepackNote).
    public var notes: String { root + "/notes" }
    /// Folder index files, one per folder item a mount looked inside.
    public var indexes: String { root + "/indexes" }
    public func item(_ blobName: String) -> String { items + "/" + blobName }
    public func dropInContent(_ blobName: String) -> String { inbox + "/" + blobName + ".item" }
    public func dropInEnvelope(_ blobName: String) -> String { inbox + "/" + blobName + ".env" }
    /// A folder drop-in's index (DroppedFolderIndex), named as its content.
    public func dropInIndex(_ contentStem: String) -> String { inbox + "/" + contentStem + ".fx" }

    /// The stem of the envelope that names the drop-in content `name`
    /// (`inbox/` file name): `<id>.item` is a single drop-in's (`<id>.env`),
    /// `<batch id>.<id>.item` a batch's (`<batch id>.env`). The part before
    /// the first dot, so a content is paired with its envelope by name alone.
    public static func envelopeStem(ofContent name: String) -> Substring {
        name.prefix(while: { $0 != "." })
    }

    /// Whether `name` (an `inbox/` file name) is a drop-in's content whose
    /// envelope is among `inbox`'s names: a drop-in that landed whole.
    public static func isContentWithEnvelope(_ name: String, in inbox: Set<String>) -> Bool {
        name.hasSuffix(".item") && inbox.contains(envelopeStem(ofContent: name) + ".env")
    }
}

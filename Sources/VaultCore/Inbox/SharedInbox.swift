import System

/// A shared vault: other users of this machine can drop items in (`vault
/// add`) and do nothing else. What each path lets them do:
///
///   DIR            0711   enter, not list
///   DIR/vault.header  0644   read the public key (it is public)
///   DIR/items      0711   look up an item by a name they know (their own
///                         packs' ids: whether a backup's cache may still
///                         point at them), not list or read any
///   DIR/inbox      1733   create files, not list, read, rename or delete
///                         them (sticky: only a file's owner, or the
///                         vault's owner, may remove it)
///   everything else unchanged: owner.lock, manifest and attempts 0600, items 0600.
///
/// No lock of the owner's is theirs to take (DropLock.swift): they wait only
/// for `drop.fence`, which they can neither make nor hold up.
///
/// A dropper's files in the inbox are 0644 so the owner can read them; they
/// hold only ciphertext sealed to the vault. Absorb copies such a file into
/// a file of the owner's own rather than renaming it (`adoptContent`): the
/// dropper owns the inode, and could keep a hard link to it.
extension Vault {
    /// (path, mode when shared, mode when private), in the order sharing sets them.
    func sharedModes() -> [(path: String, shared: UInt16, private: UInt16)] {
        [(paths.root, 0o711, 0o700), (paths.header, 0o644, 0o600), (paths.items, 0o711, 0o700), (paths.inbox, 0o1733, 0o700)]
    }

    /// Whether other users may drop items in.
    public var isShared: Bool {
        // One who cannot look at the inbox cannot drop into it either: not shared, for them.
        ((try? Syscall.status(of: paths.inbox)) ?? nil).map { $0.permissions & 0o002 != 0 } ?? false
    }

    /// The first directory above the vault that other users cannot pass
    /// (no o+x), with its mode: sharing sets the vault's own modes, but a
    /// home directory at 0700 (Debian's default) still keeps them out.
    /// Walked on the resolved path, from "/" down. nil: they can reach it.
    public func unreachableParent() throws -> (path: String, permissions: UInt16)? {
        let resolved = try Syscall.realPath(paths.root).description
        var path = ""
        for part in resolved.split(separator: "/").dropLast() {
            path += "/" + part
            guard let st = try Syscall.status(of: path, followLinks: true) else { continue }
            if st.permissions & 0o001 == 0 { return (path, st.permissions & 0o7777) }
        }
        if let root = try Syscall.status(of: "/", followLinks: true), root.permissions & 0o001 == 0 {
            return ("/", root.permissions & 0o7777)
        }
        return nil
    }

    /// The vault's directory, resolved (what other users pass to `--vault`).
    public var resolvedRoot: String { (try? Syscall.realPath(paths.root))?.description ?? paths.root }   // a path to show; unresolved is still right

    /// Whether this vault belongs to another user who shares it with us:
    /// we may drop items in and nothing else (the manifest is theirs alone).
    /// Known before any password is asked, so we say so instead of asking.
    public var isSharedWithUs: Bool {
        // Only chooses a message over a password prompt: the unlock that follows a wrong guess meets the real error.
        guard let root = (try? Syscall.status(of: paths.root)) ?? nil, root.owner != Syscall.userID else { return false }
        return (try? FileHandleFD(readingFrom: paths.manifest)) == nil   // the same
    }

    /// The user id owning the vault directory; nil if it cannot be looked
    /// at (only a message names the owner: it decides nothing).
    public var ownerID: UInt32? { ((try? Syscall.status(of: paths.root)) ?? nil)?.owner }   // for a message only

    /// Sets the modes above, or back to private. The inbox is opened last on
    /// sharing and closed first on unsharing, so no one ever finds it open
    /// with the rest shut. A `drop.lock` an earlier version shared (0644:
    /// any user could hold it and stall the owner) is removed: nothing uses
    /// it any more, and a descriptor someone keeps open on it then locks a
    /// file no one looks at.
    public func setShared(_ on: Bool) throws {
        do { try Syscall.unlink(paths.legacyDropLock) } catch let error as SystemError where error.errno == .noSuchFile {}
        let order = on ? sharedModes() : sharedModes().reversed()
        for entry in order {
            let path = entry.path
            guard let st = try Syscall.status(of: path), st.kind != .symlink else { throw VaultError.unsafeVaultPath(path) }
            let fd = try Syscall.open(path, [.readOnly, .noFollow])
            defer { Syscall.close(fd) }
            try Syscall.chmod(fd, on ? entry.shared : entry.private)
        }
        try Syscall.fsyncDirectory(paths.root)
    }

    /// A replaced header keeps a shared vault's 0644 (rekey, passwd).
    static func headerMode(_ paths: VaultPaths) -> UInt16? {
        // The safe side: a header that cannot be looked at is replaced private (0600); `share` opens it again.
        ((try? Syscall.status(of: paths.header)) ?? nil).flatMap { $0.permissions & 0o004 != 0 ? 0o644 : nil }
    }

    /// The mode a drop-in's files get: readable by the owner when the
    /// dropper may be someone else.
    var dropInFileMode: UInt16? { isShared ? 0o644 : nil }
}

import VaultCrypto
import System

/// A vault on disk, not unlocked: what works without the password
/// (creating one, reading its header, dropping items in).
public final class Vault: Sendable {
    public let paths: VaultPaths
    public let header: VaultHeader
    /// An interrupted rekey's new state, which is the truth until applied.
    let pendingRekey: RekeySwitch?

    /// Opens the vault at `root`: layout checked (no symbolic links), header
    /// parsed with its exact shape and bounded KDF parameters. No secret needed.
    public init(at root: String) throws {
        paths = VaultPaths(root: root)
        try VaultDirectory.checkLayout(paths)
        let current = try VaultHeader(parsing: VaultDirectory.readFile(paths.header, limit: VaultHeader.maxLength + 1))
        pendingRekey = try RekeySwitch.read(paths, current: current)
        header = pendingRekey?.header ?? current
    }

    /// Creates a vault at `root` (an absent or empty directory, or one left by
    /// an interrupted init) and returns it unlocked. The header is written
    /// last: until it exists there is no vault.
    public static func create(at root: String, password: Password, kdf: Argon2Parameters,
                              options: VaultOptions = []) throws -> UnlockedVault {
        let paths = VaultPaths(root: root)
        if try Syscall.status(of: paths.header) != nil { throw VaultError.alreadyExists(path: root) }
        try VaultHeader.checkBounds(kdf)
        if try Syscall.status(of: root) == nil { try makeDirectories(root) }
        guard let st = try Syscall.status(of: root), st.kind == .directory else { throw VaultError.unsafeVaultPath(root) }
        // A directory that was there (mkdir's 0755) is made as private as
        // one vault makes itself: its names and sizes are the owner's only.
        // `share` opens what others need.
        if st.permissions & 0o077 != 0 {
            let fd = try Syscall.open(root, [.readOnly, .noFollow])
            defer { Syscall.close(fd) }
            try Syscall.chmod(fd, 0o700)
        }
        for dir in [paths.items, paths.inbox] where try Syscall.status(of: dir) == nil { try Syscall.mkdir(dir) }
        let lock = try WriterLock(paths)
        let vaultID = SecureRandom.bytes(16), salt = SecureRandom.bytes(16)
        let masterKey = try MasterKey.random()
        let kek = try KeyEncryptionKey.derive(password: password.secret, salt: salt, parameters: kdf)
        let header = try VaultHeader.seal(vaultID: vaultID, options: options, masterKey: masterKey,
                                          slotName: KeySlot.defaultName, kdf: kdf, salt: salt, kek: kek, created: Syscall.now())
        let keys = try VaultKeys(masterKey: masterKey, vaultID: vaultID)
        try VaultDirectory.atomicWrite(try Manifest().sealed(key: keys.manifest, vaultID: vaultID), to: paths.manifest)
        try Syscall.fsyncDirectory(root)
        try VaultDirectory.atomicWrite(header.bytes, to: paths.header)
        return try UnlockedVault(vault: Vault(at: root), keys: keys, lock: lock)
    }

    /// `path` as a directory, made (0700, parents too) if missing: this
    /// user's state directories, which normally exist already.
    package static func ensureDirectory(_ path: String) throws {
        if let st = try Syscall.status(of: path, followLinks: true) {
            guard st.kind == .directory else { throw SystemError(operation: .mkdir, path: path, errno: .fileExists) }
            return
        }
        do { try makeDirectories(path) } catch let error as SystemError where error.errno == .fileExists {}
    }

    /// mkdir -p, each new directory 0700.
    package static func makeDirectories(_ path: String) throws {
        let parent = VaultDirectory.directory(of: path)
        if parent != path, parent != ".", try Syscall.status(of: parent, followLinks: true) == nil { try makeDirectories(parent) }
        try Syscall.mkdir(path)
    }

    /// Unlocks with the password: Argon2id (parameters already bounded by
    /// the parser), unwrap, header MAC. Takes the writer lock when free; a
    /// read-only caller proceeds without it if another writer holds it.
    ///
    /// Wrong passwords meet a persisted, growing delay (AttemptThrottle);
    /// during a wait this throws `lockedOut` without running Argon2.
    /// With `rollbackGuard`, a manifest older than one seen before is refused.
    ///
    /// The password is tried against each password slot in turn (one
    /// Argon2id run per slot tried), or only against `slot`; the delay
    /// counts one wrong attempt however many slots were tried. Slots past
    /// `KDFLimits.unlockBudget` are not tried (`slotsNotTried`).
    public func unlock(password: Password, slot: String? = nil, forWriting: Bool, clock: UnlockClock = SystemClock(),
                       rollbackGuard: RollbackGuard? = nil) throws -> UnlockedVault {
        let (candidates, skipped) = KDFLimits.withinBudget(try header.passwordSlots(named: slot))
        let masterKey: MasterKey, used: String, kek: KeyEncryptionKey
        do {
            (masterKey, used, kek) = try AttemptThrottle(path: paths.attempts, clock: clock).run {
                for s in candidates {
                    guard case .password(let kdf, let salt) = s.kind else { continue }
                    let kek = try KeyEncryptionKey.derive(password: password.secret, salt: salt, parameters: kdf)
                    do { return (try header.unlock(slot: s, kek: kek), s.name, kek) } catch VaultError.wrongPassword { continue }
                }
                throw VaultError.wrongPassword
            }
        } catch VaultError.wrongPassword where !skipped.isEmpty {
            throw VaultError.slotsNotTried(names: skipped, retryInSeconds: 0)
        } catch VaultError.wrongPasswordDelayed(let seconds) where !skipped.isEmpty {
            throw VaultError.slotsNotTried(names: skipped, retryInSeconds: seconds)
        }
        let unlocked = try unlock(masterKey: masterKey, forWriting: forWriting, rollbackGuard: rollbackGuard, slot: used)
        unlocked.slotKEK = kek
        return unlocked
    }

    /// Seconds before a password may be tried (the attempt delay after
    /// wrong ones; 0 when none is pending). Read-only: a prompt says the
    /// wait and holds until it is over instead of asking for a password
    /// that would be refused unread.
    public func passwordWait(clock: UnlockClock = SystemClock()) -> Int {
        AttemptThrottle(path: paths.attempts, clock: clock).pendingWait()
    }

    /// Unlocks with a key file: tries each key-file slot (HKDF, no Argon2id,
    /// so no attempt delay either: a key file cannot be guessed).
    public func unlock(keyFile: KeyFileSecret, forWriting: Bool, rollbackGuard: RollbackGuard? = nil) throws -> UnlockedVault {
        for s in header.slots {
            guard case .keyFile(let salt) = s.kind else { continue }
            do {
                let key = try header.unlock(slot: s, kek: keyFile.kek(salt: salt))
                return try unlock(masterKey: key, forWriting: forWriting, rollbackGuard: rollbackGuard, slot: s.name)
            } catch VaultError.wrongPassword { continue }
        }
        throw VaultError.wrongKeyFile
    }

    /// Unlocks with a master key obtained another way (a recovery kit), or
    /// from `slot`.
    public func unlock(masterKey: MasterKey, forWriting: Bool, rollbackGuard: RollbackGuard? = nil,
                       slot: String? = nil) throws -> UnlockedVault {
        try header.verify(masterKey: masterKey)
        var lock: WriterLock?
        var readOnly = false
        do { lock = try WriterLock(paths) } catch VaultError.busy where !forWriting {
            lock = nil
        } catch VaultError.readOnly where !forWriting {
            (lock, readOnly) = (nil, true)
        }
        let unlocked = try UnlockedVault(vault: self, keys: VaultKeys(masterKey: masterKey, vaultID: header.vaultID), lock: lock,
                                         readOnly: readOnly, rollbackGuard: rollbackGuard)
        unlocked.unlockedSlot = slot
        return unlocked
    }

    /// Of the drop-ins waiting, the contents of batch envelopes
    /// (`<batch>.<id>.item`): a push cannot send them (a remote's inbox
    /// takes single envelopes), only this vault can take them in.
    public func waitingBatchedDropIns() throws -> Int {
        try waitingContents().filter { $0.dropLast(5).contains(".") }.count
    }

    /// Envelopes in the inbox, whatever became of their contents (an
    /// absorb a full disk stopped has moved them to items/ already): for
    /// `list`, which must not call such a vault empty.
    public func waitingEnvelopes() throws -> Int {
        try VaultDirectory.names(in: paths.inbox).filter { !$0.hasPrefix(".") && $0.hasSuffix(".env") }.count
    }

    /// Drop-ins waiting in the inbox: contents whose envelope (single or
    /// batch, paired by name) is there, not yet absorbed.
    public func waitingDropIns() throws -> Int { try waitingContents().count }

    private func waitingContents() throws -> [String] {
        let inbox = Set(try VaultDirectory.names(in: paths.inbox))
        return inbox.filter { name in !name.hasPrefix(".") && VaultPaths.isContentWithEnvelope(name, in: inbox) }
    }

    /// Files an interrupted operation left that no operation will finish
    /// and that are no item's copy: temporary files, a drop-in's content
    /// whose envelope (single or batch: VaultPaths.envelopeStem) never
    /// landed, and a folder drop-in's index whose content is gone or is
    /// such a leftover. Files still flock'ed by a running writer (a drop-in
    /// in progress) are not leftovers. Relative paths.
    public func leftovers() throws -> [FilePath] {
        var out: [FilePath] = []
        func unlocked(_ dir: String, _ name: String) -> Bool { !isLockedByWriter(dir + "/" + name) }
        for name in try VaultDirectory.names(in: paths.items) where name.hasPrefix(VaultDirectory.tempPrefix) {
            if unlocked(paths.items, name) { out.append(FilePath("items/" + name)) }
        }
        let inbox = Set(try VaultDirectory.names(in: paths.inbox))
        var leftoverContents = Set<String>()
        for name in inbox.sorted() where !name.hasSuffix(".fx") {
            let orphanContent = name.hasSuffix(".item") && !VaultPaths.isContentWithEnvelope(name, in: inbox)
            guard (orphanContent || name.hasPrefix(VaultDirectory.tempPrefix)) && unlocked(paths.inbox, name) else { continue }
            // Looked for again after the lock: an add links its envelope
            // before it lets go of its content's flock, so one that landed
            // (and exited) since the listing shows now. Without this look
            // a `list` deleted a drop-in whose add had said "added" (issue 38, item 7).
            if orphanContent, try Syscall.status(of: paths.dropInEnvelope(String(VaultPaths.envelopeStem(ofContent: name)))) != nil {
                continue
            }
            out.append(FilePath("inbox/" + name))
            if orphanContent { leftoverContents.insert(name) }
        }
        // A folder's index without its content: absorbed, or the content a
        // leftover (found above, so both go in one tidy).
        for name in inbox.sorted() where name.hasSuffix(".fx") && !name.hasPrefix(".") {
            let content = String(name.dropLast(3)) + ".item"
            guard !inbox.contains(content) || leftoverContents.contains(content), unlocked(paths.inbox, name) else { continue }
            // Looked for again: an add links the content before the index, so one the listing missed is there now.
            if try leftoverContents.contains(content) || Syscall.status(of: paths.inbox + "/" + content) == nil {
                out.append(FilePath("inbox/" + name))
            }
        }
        for name in try VaultDirectory.names(in: paths.root) where name.hasPrefix(VaultDirectory.tempPrefix) {
            if unlocked(paths.root, name) { out.append(FilePath(name)) }
        }
        return out
    }

    /// How many leftovers there are and their size, for `info`: the next
    /// unlock (or `check --repair`) removes them.
    public func leftoverSize() throws -> (count: Int, bytes: UInt64) {
        var bytes: UInt64 = 0
        let found = try leftovers()
        for path in found {
            bytes &+= ((try? Syscall.status(of: paths.root + "/" + path.description)) ?? nil)?.size ?? 0   // a size for `info` to show
        }
        return (found.count, bytes)
    }
}

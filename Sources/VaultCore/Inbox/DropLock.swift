import System

// The drop lock and the drop fence (docs/FORMAT.md, "Adding and the drop
// lock"). Issue 38: `drop.lock` was 0644 in a shared vault, so any user
// who could reach it could hold `flock -x` on it, and the owner's `vault
// add`, `backup`, `rekey` and prune waited for ever. Now no lock file that
// another user can open decides whether the owner's commands run:
//
//   owner.lock   0600 always: the owner's adds and backups hold it shared,
//                rekey and prune exclusively (the old drop.lock's rules, for
//                the owner's own processes). Others never open it.
//   drop.fence   0644, there only while rekey or prune decides: made by
//                that owner's process, which flocks it before it has a name
//                (so it is the first and only holder) and removes it when done.
//                Other users' adds and backups wait while it stands (by
//                looking, never by a blocking flock another user could
//                prolong), and look again once their drop-ins have landed:
//                an add resealed to the new key if a rekey ran meanwhile
//                (DropInBatch), a backup its packs still there if a prune
//                ran meanwhile (Vault.confirmLanded). The owner never waits
//                for anything of theirs.

/// The drop lock as one process holds it: the owner's `owner.lock` (with the
/// fence raised too, when exclusive), or, for another user of a shared
/// vault, nothing held: only the fence waited out.
final class DropLock {
    private let fd: Int32?
    private let fence: TempFile?
    private let paths: VaultPaths
    /// Whether this process is another user dropping into a shared vault:
    /// it holds nothing, and checks after its drop-ins land.
    let isForeign: Bool

    /// Waits for the lock (`exclusive` for rekey and prune); `waiting` is
    /// told first when it has to.
    init(_ paths: VaultPaths, exclusive: Bool, waiting: (() -> Void)? = nil) throws {
        self.paths = paths
        isForeign = try Vault.isForeignDropper(paths)
        if isForeign {
            // Rekey and prune are the owner's (they unlock first): never another user's.
            guard !exclusive else { throw VaultError.readOnly(path: paths.root, cause: .anotherUsersVault) }
            (fd, fence) = (nil, nil)
            try DropFence.wait(paths, waiting: waiting)
            return
        }
        let fd: Int32
        do { fd = try Syscall.open(paths.dropLock, [.readOnly, .noFollow]) } catch let error as SystemError where error.errno == .noSuchFile {
            fd = try Syscall.open(paths.dropLock, [.readWrite, .create, .noFollow], mode: 0o600)
        }
        do {
            if try !Syscall.flock(fd, exclusive: exclusive, wait: false) {
                waiting?()
                _ = try Syscall.flock(fd, exclusive: exclusive, wait: true)
            }
            fence = exclusive ? try DropFence.raise(paths) : nil
        } catch {
            Syscall.close(fd)
            throw error
        }
        self.fd = fd
    }

    deinit {
        // The fence goes before the lock: a dropper that finds it gone
        // finds whatever the owner decided done.
        // deinit cannot throw; a fence left behind no longer stands once its flock goes (DropFence.isStanding).
        if fence != nil { try? Syscall.unlink(paths.dropFence) }
        if let fd { Syscall.close(fd) }
    }
}

/// `drop.fence`: what other users of a shared vault see of a rekey or a
/// prune in progress, without any way to hold it up.
enum DropFence {
    /// How often a waiting dropper looks again, in seconds.
    static let pollInterval = 0.02

    /// Raises the fence: a new file, flocked while it has no name, holding
    /// this process's id and start time, then renamed over any fence a
    /// killed owner's process left. Held (flock'ed) until the TempFile goes.
    static func raise(_ paths: VaultPaths) throws -> TempFile {
        let fence = try TempFile(beside: paths.dropFence, mode: 0o644)
        try Array((try ProcessStamp.current().text(separator: " ") + "\n").utf8).withUnsafeBytes { try fence.file.write($0) }
        try fence.commit(to: paths.dropFence, durable: false)
        return fence
    }

    /// Returns once no rekey or prune of the owner's is deciding: no fence,
    /// or one whose process is gone or no longer holds it. Never blocks in
    /// flock (another user could hold a lock on the fence's inode to make
    /// droppers wait): it looks every 20 ms. `waiting` is told once, first.
    static func wait(_ paths: VaultPaths, waiting: (() -> Void)? = nil) throws {
        var told = false
        while try isStanding(paths) {
            if !told { waiting?(); told = true }
            Syscall.sleep(pollInterval)
        }
    }

    /// Whether a fence stands: the file is there, its process alive, and
    /// someone holds it (the owner's process, which took it first).
    private static func isStanding(_ paths: VaultPaths) throws -> Bool {
        let fd: Int32
        do { fd = try Syscall.open(paths.dropFence, [.readOnly, .noFollow, .nonBlocking]) } catch let error as SystemError
            where error.errno == .noSuchFile {
            return false
        }
        let file = FileHandleFD(owning: fd, path: paths.dropFence)
        var raw = [UInt8](repeating: 0, count: 64)
        let n = try raw.withUnsafeMutableBytes { try file.read(at: 0, into: $0) }
        let fields = String(decoding: raw[..<n], as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let stamp = ProcessStamp(fields: fields), stamp.isRunning else { return false }   // left by a process that is gone
        return try !Syscall.flock(fd, exclusive: false, wait: false)
    }
}

extension Vault {
    /// Whether this process drops into another user's shared vault (it is
    /// neither the vault directory's owner nor root): it takes no lock the
    /// owner waits on (DropLock).
    static func isForeignDropper(_ paths: VaultPaths) throws -> Bool {
        guard !Syscall.isRoot else { return false }
        guard let st = try Syscall.status(of: paths.root) else { throw VaultError.notAVault }
        return st.owner != Syscall.userID
    }

    /// The same, for this vault.
    public func dropsAsAnotherUser() throws -> Bool { try Self.isForeignDropper(paths) }
}

extension DropLock {
    /// An envelope another user's add has landed: its stem (file name
    /// without `.env`) and how to seal it again to another header's key.
    struct Landed {
        let stem: String
        let seal: (VaultHeader) throws -> [UInt8]
    }

    /// After another user's envelopes have landed sealed to `key`: once no
    /// fence stands, the vault's key is read again. The same: nothing more
    /// to do (a rekey that starts now takes them in with the old key first).
    /// Changed: a rekey ran meanwhile. It took in what it found of ours and
    /// removed it before it lowered the fence, so an envelope still there
    /// is one it did not see, sealed to a key that no longer opens: it is
    /// replaced by one sealed to the new key (unlinked first, which only we,
    /// its owner, and the vault's owner may do), and so on until the key
    /// holds still. The owner needs no lock of ours for this.
    func confirm(_ landed: [Landed], sealedTo key: VaultPublicKey, write: (String, [UInt8]) throws -> Void) throws {
        guard isForeign else { return }
        var left = landed, key = key
        while !left.isEmpty {
            try DropFence.wait(paths)
            let now = try Vault(at: paths.root).header
            if now.publicKey == key { return }
            left = try left.filter { l in
                do { try Syscall.unlink(paths.dropInEnvelope(l.stem)) } catch let error as SystemError where error.errno == .noSuchFile {
                    return false   // taken in by the rekey
                }
                return true
            }
            for l in left { try write(l.stem, try l.seal(now)) }
            key = now.publicKey
        }
    }
}

/// Where a backup's pack is, as a process that may not list the vault sees it.
public enum PackPresence: Sendable, Equatable {
    /// In items/, or whole (content and envelope) in the inbox.
    case present
    /// In neither.
    case gone
    /// Not known: items/ cannot be searched by this user (a vault shared by
    /// a version before issue 38, items/ 0700). Never taken for `gone`.
    case unknown
}

extension Vault {
    /// Whether pack `pack` is still in the vault directory. Permission
    /// denied is `unknown`, never "gone" (issue 38, item 5: another user's
    /// cache read EACCES on items/ as "gone" and stored everything again).
    public func presence(ofPack pack: [UInt8]) throws -> PackPresence {
        let hex = Hex.encode(pack)
        func there(_ path: String) throws -> Bool? {
            do { return try Syscall.status(of: path) != nil } catch let error as SystemError where error.errno == .permissionDenied {
                return nil
            }
        }
        if try there(paths.dropInContent(hex)) == true, try there(paths.dropInEnvelope(hex)) == true { return .present }
        switch try there(paths.item(hex)) {
        case true?: return .present
        case false?: return .gone
        case nil: return .unknown
        }
    }

    /// What another user's backup finds once its snapshot has landed.
    public enum LandedBackup: Sendable, Equatable {
        case whole
        /// Packs it lists are gone (a prune ran meanwhile): the snapshot
        /// was taken back out of the inbox, so it does not wait there refused.
        case packsGone([[UInt8]])
        /// Whether its packs are all there cannot be known (`unknown`).
        case unconfirmed
    }

    /// For another user's backup, which holds no lock prune waits for:
    /// once no fence stands, every pack its snapshot (`snapshot`, a blob
    /// name) lists must still be there. A prune that could not see the
    /// snapshot raised its fence before it looked (so we waited here for
    /// it to finish), and one that saw it keeps its packs. For the owner's
    /// own backups (the drop lock orders them): `whole`.
    public func confirmLanded(snapshot: String, packs: [[UInt8]]) throws -> LandedBackup {
        guard try dropsAsAnotherUser() else { return .whole }
        try DropFence.wait(paths)
        var gone: [[UInt8]] = [], unknown = false
        for p in packs {
            switch try presence(ofPack: p) {
            case .present: break
            case .gone: gone.append(p)
            case .unknown: unknown = true
            }
        }
        guard !gone.isEmpty else { return unknown ? .unconfirmed : .whole }
        // Ours to remove (the sticky inbox lets a file's owner): envelope first.
        for path in [paths.dropInEnvelope(snapshot), paths.dropInContent(snapshot)] {
            do { try Syscall.unlink(path) } catch let error as SystemError where error.errno == .noSuchFile {}
        }
        return .packsGone(gone)
    }
}

import System
import VaultCore

/// `$XDG_RUNTIME_DIR/vault`: where agents listen, one socket per vault,
/// named by the vault's id (`<id hex>.sock`), with a lock file beside it
/// (`<id hex>.lock`) that the running agent holds for its whole life. The
/// lock, not the socket, says whether an agent runs: a socket left by a
/// killed agent is stale exactly when nobody holds its lock.
///
/// The directory must be a real directory (not a link), owned by this user,
/// with no permission for group or others (0700). Anything else is refused
/// rather than repaired: someone else made it, and a socket in it could be
/// theirs. Held open, so the checks apply to what is then used.
public final class AgentDirectory: Sendable {
    public let path: String
    let fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { Syscall.close(fd) }

    /// The directory's path: `$XDG_RUNTIME_DIR/vault`. Where that is unset
    /// or relative (su, cron, an ssh session without pam_systemd), the same
    /// place when it is there (`/run/user/UID`, this user's, 0700), else
    /// `/dev/shm/vault-agent-UID`, in memory as `open`'s copies are (issue
    /// 43, item 8: `unlock` failed where `open` fell back). Not open's own
    /// `/dev/shm/vault-UID`, whose leftovers every command erases. Both sides compute
    /// the same path from the same environment. nil: none of them exists.
    public static func location(environment: [String: String]) -> String? {
        if let base = environment["XDG_RUNTIME_DIR"], base.hasPrefix("/") {
            return (base.hasSuffix("/") ? base : base + "/") + "vault"
        }
        let uid = Syscall.userID
        // A place that cannot be looked at is not used: the next one is tried.
        if let run = try? Syscall.status(of: "/run/user/\(uid)"), run.kind == .directory, run.owner == uid,
           run.permissions & 0o077 == 0 {
            return "/run/user/\(uid)/vault"
        }
        // The same: no /dev/shm, no fallback (and the error says what to set).
        if let shm = try? Syscall.status(of: "/dev/shm", followLinks: true), shm.isDirectory {
            return "/dev/shm/vault-agent-\(uid)"
        }
        return nil
    }

    /// Opens (and with `create`, makes) the directory and checks it; nil
    /// when it does not exist and `create` is false.
    public static func open(environment: [String: String], create: Bool) throws -> AgentDirectory? {
        guard let path = location(environment: environment) else {
            if create { throw AgentError.noRuntimeDirectory }
            return nil
        }
        if create {
            do { try Syscall.mkdir(path, mode: 0o700) } catch let e as SystemError where e.errno == .fileExists {}
        }
        let fd: Int32
        do {
            fd = try Syscall.open(path, [.directory, .noFollow])
        } catch let e as SystemError where e.errno == .noSuchFile && !create {
            return nil
        } catch let e as SystemError where e.errno == .tooManySymlinks || e.errno == .notDirectory {
            throw AgentError.unsafeDirectory(path: path, problem: .notADirectory)
        }
        let directory = AgentDirectory(path: path, fd: fd)
        let status = try Syscall.status(fd, path: path)
        guard status.owner == Syscall.userID else {
            throw AgentError.unsafeDirectory(path: path, problem: .ownedBy(status.owner))
        }
        guard status.permissions & 0o077 == 0 else {
            throw AgentError.unsafeDirectory(path: path, problem: .openToOthers(mode: status.permissions))
        }
        return directory
    }

    static func socketName(_ vaultID: [UInt8]) -> String { Hex.encode(vaultID) + ".sock" }
    static func lockName(_ vaultID: [UInt8]) -> String { Hex.encode(vaultID) + ".lock" }

    /// The vault ids that have a socket here, running or stale.
    func socketVaultIDs() throws -> [[UInt8]] {
        try Syscall.names(in: fd, display: path).compactMap { name in
            let text = String(decoding: name, as: UTF8.self)
            guard text.hasSuffix(".sock") else { return nil }
            return Hex.decode(String(text.dropLast(5))).flatMap { $0.count == AgentRequest.vaultIDLength ? $0 : nil }
        }
    }

    /// Whether an agent holds the lock of `vaultID`. Takes the lock for a
    /// moment to find out, so a starting agent may have to try again
    /// (`AgentServer` does).
    func agentRuns(_ vaultID: [UInt8]) -> Bool {
        guard let lock = try? Syscall.open(in: fd, Array(Self.lockName(vaultID).utf8), [.readOnly, .noFollow], display: path)
        else { return false }
        defer { Syscall.close(lock) }
        guard let free = try? Syscall.flock(lock, exclusive: true, wait: false) else { return true }
        if free { Syscall.unlock(lock) }
        return !free
    }

    /// Removes the socket of `vaultID` if no agent runs for it: what a
    /// killed agent leaves behind.
    func removeStaleSocket(_ vaultID: [UInt8]) {
        guard !agentRuns(vaultID) else { return }
        remove(Self.socketName(vaultID))
    }

    /// Unlinks `name` here, if it is there.
    func remove(_ name: String) {
        try? Syscall.unlink(in: fd, Array(name.utf8), isDirectory: false, display: path)
    }
}

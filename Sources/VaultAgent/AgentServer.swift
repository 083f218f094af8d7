import System
import VaultCore
import VaultCrypto

/// The unlock agent: holds one vault's master key in guarded memory
/// (SecretBytes: locked, excluded from core dumps, zeroed when freed) and
/// hands it to this user's vault commands over a Unix socket, until its time
/// runs out, `vault lock` asks it to end, or it is signalled.
///
/// Who may ask: only processes of this user. The socket is 0600 in a 0700
/// directory (others cannot even connect), and every connection's peer
/// credentials (SO_PEERCRED, recorded by the kernel) are checked besides,
/// so root's processes and anything else of another uid are refused too.
///
/// One connection at a time, each with a 2-second limit, so a client that
/// connects and says nothing delays the others by at most that.
public final class AgentServer {
    static let connectionTimeout = 2
    /// How long the loop sleeps at most before looking at the clock again:
    /// poll(2) counts on a clock that stops while the machine sleeps.
    static let longestWait = 5.0

    let directory: AgentDirectory
    let setup: AgentSetup
    let lockFD: Int32
    let listener: UnixListener
    let socketName: String
    let startedWall = Syscall.now()
    let started = Syscall.bootSeconds()
    var lastUse = Syscall.bootSeconds()

    /// Takes this vault's lock (an agent already running is `alreadyRunning`),
    /// removes a stale socket, and listens: the socket is bound under a
    /// temporary name, made 0600, then renamed into place, so a client never
    /// finds one that is not yet listening.
    public init(setup: AgentSetup, environment: [String: String]) throws {
        guard let directory = try AgentDirectory.open(environment: environment, create: true) else {
            throw AgentError.noRuntimeDirectory
        }
        self.directory = directory
        self.setup = setup
        socketName = AgentDirectory.socketName(setup.vaultID)
        let lockName = Array(AgentDirectory.lockName(setup.vaultID).utf8)
        lockFD = try Syscall.open(in: directory.fd, lockName, [.readWrite, .create, .noFollow], display: directory.path)
        // A client checking for a stale socket holds the lock for a moment.
        var locked = false
        for _ in 0..<20 {
            if try Syscall.flock(lockFD, exclusive: true, wait: false) { locked = true; break }
            Syscall.sleep(0.05)
        }
        guard locked else {
            Syscall.close(lockFD)
            throw AgentError.alreadyRunning
        }
        do {
            directory.remove(socketName)
            let temporary = "\(Hex.encode(setup.vaultID)).\(Syscall.processID).tmp"
            directory.remove(temporary)
            listener = try UnixListener(in: directory.fd, temporary)
            try Syscall.chmod(in: directory.fd, temporary, 0o600)
            try Syscall.rename(in: directory.fd, temporary, socketName)
        } catch {
            Syscall.close(lockFD)
            throw error
        }
    }

    deinit { Syscall.close(lockFD) }

    var deadline: Double { (setup.idle ? lastUse : started) + Double(setup.limit) }

    /// Answers requests until the time runs out or a `lock` request comes,
    /// then removes the socket. The key is freed (and zeroed) with the server.
    public func serve() {
        while Syscall.bootSeconds() < deadline && socketIsInPlace {
            let wait = min(deadline - Syscall.bootSeconds(), Self.longestWait)
            guard listener.waitForConnection(seconds: wait), let connection = try? listener.accept() else { continue }
            if answer(connection) == .lock { break }
        }
        removeSocket()
    }

    /// Whether our socket is still where clients look. It goes when the
    /// runtime directory does (systemd-logind removes it at the session's
    /// end) or when someone removed it: then no client can reach the agent,
    /// and holding the key on would serve nobody.
    var socketIsInPlace: Bool {
        (try? Syscall.status(in: directory.fd, Array(socketName.utf8), display: directory.path))?.kind == .socket
    }

    /// Unlinks the socket; safe to call more than once, and from the
    /// interrupt handler while `serve` runs.
    public func removeSocket() {
        directory.remove(socketName)
    }

    /// What ends the agent from another thread (the interrupt handler):
    /// removes the socket and zeroes the key, both safe to repeat.
    public var erase: @Sendable () -> Void {
        let (directory, name, key) = (directory, socketName, setup.key)
        return {
            directory.remove(name)
            key.withUnsafeMutableBytes { SecureZero.zero($0) }
        }
    }

    /// Handles one connection; returns the operation it carried out.
    func answer(_ connection: UnixConnection) -> AgentOperation? {
        connection.setTimeout(Self.connectionTimeout)
        guard let peer = try? connection.peerCredentials(), peer.user == Syscall.userID else { return nil }
        // Checked again here: the machine may just have woken from a sleep
        // that outlasted the limit.
        guard Syscall.bootSeconds() < deadline else { return nil }
        var request = [UInt8](repeating: 0, count: AgentRequest.length)
        let n = (try? request.withUnsafeMutableBytes { try connection.receive(into: $0) }) ?? 0
        guard n == AgentRequest.length, let parsed = AgentRequest(request) else {
            try? send([AgentResult.unknownRequest.rawValue], on: connection)
            return nil
        }
        guard parsed.vaultID == setup.vaultID else {
            try? send([AgentResult.otherVault.rawValue], on: connection)
            return nil
        }
        do {
            switch parsed.operation {
            case .key:
                lastUse = Syscall.bootSeconds()
                try send([AgentResult.ok.rawValue], on: connection)
                try setup.key.withUnsafeBytes { try connection.send($0) }
            case .status:
                let left = max(0, deadline - Syscall.bootSeconds())
                let status = AgentStatus(secondsLeft: UInt32(min(left.rounded(.up), Double(UInt32.max))), idle: setup.idle,
                                         limit: setup.limit, started: UInt64(max(0, startedWall)))
                try send([AgentResult.ok.rawValue] + status.bytes, on: connection)
            case .lock:
                // Ends whether or not the answer arrives.
                try? send([AgentResult.ok.rawValue], on: connection)
            }
        } catch {
            return nil
        }
        return parsed.operation
    }

    private func send(_ bytes: [UInt8], on connection: UnixConnection) throws {
        try bytes.withUnsafeBytes { try connection.send($0) }
    }
}

import System
import VaultCrypto

/// The commands' side of the agent: one connection per request. Before it
/// believes an answer it checks that the directory is this user's alone
/// (AgentDirectory) and that the process at the other end runs as this user
/// (SO_PEERCRED); a socket whose agent was killed is removed on the way.
public enum AgentClient {
    /// How long a request may take before the agent counts as gone.
    static let timeout = 5

    /// The master key from this vault's agent; nil when none runs.
    public static func key(vaultID: [UInt8], environment: [String: String]) throws -> SecretBytes? {
        guard let connection = try request(.key, vaultID: vaultID, environment: environment) else { return nil }
        let key = try SecretBytes(count: AgentSetup.keyLength)
        let n = try key.withUnsafeMutableBytes { try connection.receive(into: $0) }
        guard n == AgentSetup.keyLength else { throw AgentError.badAnswer }
        return key
    }

    /// How long this vault's agent has left; nil when none runs.
    public static func status(vaultID: [UInt8], environment: [String: String]) throws -> AgentStatus? {
        guard let connection = try request(.status, vaultID: vaultID, environment: environment) else { return nil }
        var body = [UInt8](repeating: 0, count: AgentStatus.encodedLength)
        guard try body.withUnsafeMutableBytes({ try connection.receive(into: $0) }) == body.count,
              let status = AgentStatus(body) else { throw AgentError.badAnswer }
        return status
    }

    /// Ends this vault's agent; false when none ran.
    @discardableResult
    public static func lock(vaultID: [UInt8], environment: [String: String]) throws -> Bool {
        try request(.lock, vaultID: vaultID, environment: environment) != nil
    }

    /// Ends every agent of this user; returns how many ended.
    public static func lockAll(environment: [String: String]) throws -> Int {
        guard let directory = try AgentDirectory.open(environment: environment, create: false) else { return 0 }
        var ended = 0
        for id in try directory.socketVaultIDs() where try request(.lock, vaultID: id, in: directory) != nil {
            ended += 1
        }
        return ended
    }

    /// Sends `operation` and reads the result byte; returns the connection,
    /// positioned at the answer's body, or nil when no agent runs.
    static func request(_ operation: AgentOperation, vaultID: [UInt8],
                        environment: [String: String]) throws -> UnixConnection? {
        guard vaultID.count == AgentRequest.vaultIDLength,
              let directory = try AgentDirectory.open(environment: environment, create: false) else { return nil }
        return try request(operation, vaultID: vaultID, in: directory)
    }

    static func request(_ operation: AgentOperation, vaultID: [UInt8], in directory: AgentDirectory) throws -> UnixConnection? {
        let connection: UnixConnection
        do {
            connection = try UnixConnection.connect(in: directory.fd, AgentDirectory.socketName(vaultID))
        } catch let e as SystemError where e.errno == .noSuchFile {
            return nil
        } catch let e as SystemError where e.errno == .connectionRefused {
            directory.removeStaleSocket(vaultID)
            return nil
        }
        let peer = try connection.peerCredentials()
        guard peer.user == Syscall.userID else { throw AgentError.foreignPeer(user: peer.user) }
        connection.setTimeout(timeout)
        try AgentRequest(operation: operation, vaultID: vaultID).bytes.withUnsafeBytes { try connection.send($0) }
        var result: [UInt8] = [0xff]
        // An agent whose time ran out closes without answering: none runs.
        guard try result.withUnsafeMutableBytes({ try connection.receive(into: $0) }) == 1 else { return nil }
        guard result[0] == AgentResult.ok.rawValue else { throw AgentError.badAnswer }
        return connection
    }
}

import ByteLayout
import System
import VaultCrypto

/// What `vault unlock` hands the agent process it starts, on that process's
/// standard input (a pipe: never argv, which every user can read in /proc):
///
///   setup = version (1: 0x01) || vault id (16) || time limit in seconds (u32be)
///           || idle (1: 0x00 or 0x01) || master key (32)
public struct AgentSetup: Sendable {
    static let version: UInt8 = 1
    static let keyLength = 32
    static let publicLength = 1 + AgentRequest.vaultIDLength + 4 + 1
    /// The longest time an agent may run: a week. Longer is a password kept
    /// in memory indefinitely, which is not what an agent is for.
    public static let longestLimit: UInt32 = 7 * 24 * 3600

    public let vaultID: [UInt8]
    public let limit: UInt32
    public let idle: Bool
    let key: SecretBytes

    public init(vaultID: [UInt8], limit: UInt32, idle: Bool, key: SecretBytes) throws {
        guard vaultID.count == AgentRequest.vaultIDLength, key.count == Self.keyLength,
              (1...Self.longestLimit).contains(limit) else { throw AgentError.badSetup }
        (self.vaultID, self.limit, self.idle, self.key) = (vaultID, limit, idle, key)
    }

    func write(to fd: Int32) throws {
        var head = ByteWriter([Self.version] + vaultID)
        head.u32(limit)
        head.u8(idle ? 1 : 0)
        try Syscall.writeFully(fd, head.bytes)
        try key.withUnsafeBytes { try Syscall.writeFully(fd, $0) }
    }

    /// Reads exactly one setup from `fd` (the agent's standard input).
    static func read(from fd: Int32) throws -> AgentSetup {
        var head = [UInt8](repeating: 0, count: publicLength)
        guard try Syscall.readFully(fd, into: &head) == publicLength else { throw AgentError.badSetup }
        var r = ByteReader(head)
        guard let v = try? r.u8(), v == version, let vaultID = try? r.bytes(AgentRequest.vaultIDLength),
              let limit = try? r.u32(), let idle = try? r.u8(), idle <= 1, (try? r.finish()) != nil
        else { throw AgentError.badSetup }
        let key = try SecretBytes(count: keyLength)
        let n = try key.withUnsafeMutableBytes { try Syscall.readFully(fd, $0) }
        guard n == keyLength else { throw AgentError.badSetup }
        do {
            return try AgentSetup(vaultID: vaultID, limit: limit, idle: idle == 1, key: key)
        } catch {
            throw AgentError.badSetup
        }
    }
}

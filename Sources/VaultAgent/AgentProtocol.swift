// What travels on an agent's socket (docs/FORMAT.md, "Unlock agent"). One
// request per connection, one answer, then the agent closes:
//
//   request = version (1: 0x01) || operation (1) || vault id (16)
//   operation: 0x01 key, 0x02 status, 0x03 lock
//   answer  = result (1) || body, where result 0x00 is ok (body follows),
//             0x01 another vault's agent, 0x02 an unknown request (no body)
//   body of key:    master key (32)
//   body of status: seconds left (u32be) || idle (1: 0x00 or 0x01)
//                   || time limit in seconds (u32be) || started (u64be, Unix seconds)
//   body of lock:   empty; the agent erases the key and exits
//
// Every size is fixed by the operation, so both ends read exact counts.

import ByteLayout

public enum AgentOperation: UInt8, Sendable {
    case key = 1
    case status = 2
    case lock = 3
}

struct AgentRequest: Equatable {
    static let version: UInt8 = 1
    static let vaultIDLength = 16
    static let length = 2 + vaultIDLength

    let operation: AgentOperation
    let vaultID: [UInt8]

    var bytes: [UInt8] { [Self.version, operation.rawValue] + vaultID }

    /// nil for anything but an exact, known request.
    init?(_ b: [UInt8]) {
        var r = ByteReader(b)
        guard let version = try? r.u8(), version == Self.version,
              let code = try? r.u8(), let op = AgentOperation(rawValue: code),
              let id = try? r.bytes(Self.vaultIDLength), (try? r.finish()) != nil else { return nil }
        (operation, vaultID) = (op, id)
    }

    init(operation: AgentOperation, vaultID: [UInt8]) {
        (self.operation, self.vaultID) = (operation, vaultID)
    }
}

enum AgentResult: UInt8 {
    case ok = 0
    case otherVault = 1
    case unknownRequest = 2
}

/// What `vault unlock --status` shows.
public struct AgentStatus: Equatable, Sendable {
    static let encodedLength = 4 + 1 + 4 + 8

    /// Seconds until the agent ends (from now, or from the last use with `idle`).
    public let secondsLeft: UInt32
    /// Whether the limit counts from the last use rather than from the start.
    public let idle: Bool
    /// The limit given to `vault unlock --for`, in seconds.
    public let limit: UInt32
    /// When the agent started, Unix seconds.
    public let started: UInt64

    var bytes: [UInt8] {
        var w = ByteWriter(capacity: Self.encodedLength)
        w.u32(secondsLeft)
        w.u8(idle ? 1 : 0)
        w.u32(limit)
        w.u64(started)
        return w.bytes
    }

    init(secondsLeft: UInt32, idle: Bool, limit: UInt32, started: UInt64) {
        (self.secondsLeft, self.idle, self.limit, self.started) = (secondsLeft, idle, limit, started)
    }

    init?(_ b: [UInt8]) {
        var r = ByteReader(b)
        guard let left = try? r.u32(), let idle = try? r.u8(), idle <= 1, let limit = try? r.u32(),
              let started = try? r.u64(), (try? r.finish()) != nil else { return nil }
        (secondsLeft, self.idle, self.limit, self.started) = (left, idle == 1, limit, started)
    }
}

import Foundation
import Testing
@testable import VaultAgent

/// The agent's request and status bytes (docs/FORMAT.md, "Unlock agent"):
/// exact shapes both ways, and anything else is no request at all (the
/// agent answers "unknown request" and keeps its key).
@Suite struct AgentProtocolTests {
    static let id = Array(0x20...0x2f as ClosedRange<UInt8>)

    @Test func requestsRoundTripAndNothingElseParses() {
        for op in [AgentOperation.key, .status, .lock] {
            let r = AgentRequest(operation: op, vaultID: Self.id)
            #expect(r.bytes == [1, op.rawValue] + Self.id)
            #expect(AgentRequest(r.bytes) == r)
            // Every shorter prefix, one byte more, another version, an unknown operation.
            for n in 0..<r.bytes.count { #expect(AgentRequest(Array(r.bytes.prefix(n))) == nil) }
            #expect(AgentRequest(r.bytes + [0]) == nil)
            #expect(AgentRequest([2] + r.bytes.dropFirst()) == nil)
        }
        for code: UInt8 in [0, 4, 255] { #expect(AgentRequest([1, code] + Self.id) == nil) }
    }

    @Test func statusRoundTripsWithAnExactShape() {
        let s = AgentStatus(secondsLeft: 3600, idle: true, limit: 7200, started: 1_767_225_600)
        #expect(s.bytes.count == AgentStatus.encodedLength)
        #expect(AgentStatus(s.bytes) == s)
        var idleTwo = s.bytes
        idleTwo[4] = 2
        #expect(AgentStatus(idleTwo) == nil, "idle is 0 or 1")
        #expect(AgentStatus(Array(s.bytes.dropLast())) == nil)
        #expect(AgentStatus(s.bytes + [0]) == nil)
    }

    /// The socket directory: under $XDG_RUNTIME_DIR when it is absolute;
    /// else this user's /run/user/UID, else /dev/shm/vault-UID.
    @Test func theDirectoryIsUnderAnAbsoluteRuntimeDirectory() {
        #expect(AgentDirectory.location(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/vault")
        #expect(AgentDirectory.location(environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"]) == "/run/user/1000/vault")
        let uid = getuid()
        var run = stat()
        let fallback = stat("/run/user/\(uid)", &run) == 0 && run.st_uid == uid && run.st_mode & 0o077 == 0
            ? "/run/user/\(uid)/vault" : "/dev/shm/vault-agent-\(uid)"
        #expect(AgentDirectory.location(environment: ["XDG_RUNTIME_DIR": "run/user"]) == fallback)
        #expect(AgentDirectory.location(environment: [:]) == fallback)
        #expect(AgentDirectory.socketName(Self.id) == "202122232425262728292a2b2c2d2e2f.sock")
    }
}

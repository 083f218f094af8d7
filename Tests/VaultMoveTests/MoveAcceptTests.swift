import Foundation
import Synchronization
import System
import Testing
import VaultCore
import VaultCrypto
@testable import VaultMove

/// Who a receive lets in (MoveAccept): a long code turns away up to three
/// senders that do not hold it, then stops; the right one after two wrong
/// ones gets in. Real sockets on 127.0.0.1, real handshakes.
@Suite struct MoveAcceptTests {
    /// Runs `MoveAccept.sender` on a thread while `senders` connect in turn.
    static func receive(_ senders: [[UInt8]], ownKey: XWing.PrivateKey, token: [UInt8])
        throws -> (result: Result<String, any Error>, refused: [Int]) {
        let listener = try TCPListener(address: MoveAddress("127.0.0.1")!, port: 0)
        let code = { (t: [UInt8]) in try MoveCode(addresses: [MoveAddress("127.0.0.1")!], port: listener.port, receiverKey: ownKey.publicKey, token: t) }
        let got = Mutex<(Result<String, any Error>?, [Int])>((nil, []))
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let r = Result {
                try MoveAccept.sender(on: listener, ownKey: ownKey, token: token, short: nil) { _, n in got.withLock { $0.1.append(n) } }.sas
            }
            got.withLock { $0.0 = r }
            done.signal()
        }
        for t in senders {
            let c = try TCPConnection.connect(to: [MoveAddress("127.0.0.1")!], port: listener.port)
            _ = try? MoveChannel.connect(c, code: code(t))
            c.shutdownSending()
        }
        done.wait()
        return got.withLock { ($0.0!, $0.1) }
    }

    @Test func threeWrongSendersStopTheReceive() throws {
        let key = try XWing.PrivateKey(), token = SecureRandom.bytes(16)
        let wrong = (0..<3).map { _ in SecureRandom.bytes(16) }
        let (result, refused) = try Self.receive(wrong, ownKey: key, token: token)
        #expect(throws: MoveError.tooManyWrongCodes(count: MoveAccept.maxFailedAttempts)) { try result.get() }
        #expect(refused == [1, 2, 3])
    }

    @Test func theRightSenderAfterTwoWrongOnesGetsIn() throws {
        let key = try XWing.PrivateKey(), token = SecureRandom.bytes(16)
        let (result, refused) = try Self.receive([SecureRandom.bytes(16), SecureRandom.bytes(16), token], ownKey: key, token: token)
        #expect(try result.get().isEmpty == false)
        #expect(refused == [1, 2])
    }
}

import Foundation
import Synchronization
import System
import VaultCore
import VaultCrypto
import VaultMove

/// `vault-bench move-handshake N` (scripts/bench-move.sh): N move handshakes
/// of each version over 127.0.0.1, alternating, both sides in this process
/// (the receiver on its own thread), from the sender's TCP connect until
/// both sides hold a confirmed session. The receiver's key pair is made
/// before, as `move receive` makes it before it shows the code, and timed
/// on its own. Prints the median of each, in milliseconds.
func benchMoveHandshake(_ n: Int) throws {
    let localhost = MoveAddress("127.0.0.1")!
    let listener = try TCPListener(address: localhost, port: 0)
    var classic: [Double] = [], hybrid: [Double] = [], keygen: [Double] = []
    for i in 0..<(2 * n + 2) {
        let token = SecureRandom.bytes(MoveCode.tokenLength)
        let isHybrid = i % 2 == 0
        let code: MoveCode
        let accept: @Sendable (TCPConnection) throws -> MoveChannel
        if isHybrid {
            var key: XWing.PrivateKey?
            keygen.append(try seconds { key = try XWing.PrivateKey() })
            let k = key!
            code = try MoveCode(addresses: [localhost], port: listener.port, receiverKey: k.publicKey, token: token)
            accept = { try MoveChannel.accept($0, ownKey: k, token: token) }
        } else {
            let k = try X25519PrivateKey()
            code = try MoveCode(addresses: [localhost], port: listener.port, publicKey: k.publicKey, token: token)
            accept = { try MoveChannel.accept($0, ownKey: k, token: token) }
        }
        let done = DispatchSemaphore(value: 0)
        let sas = Mutex<String?>(nil)
        Thread.detachNewThread {
            let s = try? accept(listener.accept()).sas
            sas.withLock { $0 = s }
            done.signal()
        }
        var senderSAS = ""
        let t = try seconds {
            let channel = try MoveChannel.connect(try TCPConnection.connect(to: [localhost], port: listener.port), code: code)
            senderSAS = channel.sas
            done.wait()
        }
        guard sas.withLock({ $0 }) == senderSAS else { throw VaultError.corruptedOrTampered }
        if i >= 2 { if isHybrid { hybrid.append(t) } else { classic.append(t) } }  // the first of each warms up
    }
    func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] * 1000 }
    print(String(format: "move-handshake classic %.3f hybrid %.3f keygen %.3f n %d",
                 median(classic), median(hybrid), median(keygen), n))
}

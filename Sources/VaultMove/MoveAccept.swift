import System
import VaultCore
import VaultCrypto

/// Which senders a `move receive` lets in (docs/FORMAT.md, "Device move"),
/// decided here rather than in the command so a test reaches it: a short
/// code (CPace) allows one guess, so the first sender whose key
/// confirmation fails spends it; a long code allows `maxFailedAttempts`
/// connections that do not hold it (a port scanner, a mistyped code)
/// before the receiver stops listening. Anything else a connection does
/// wrong ends the receive with that error.
public enum MoveAccept {
    /// Connections that fail a long code's handshake before the receiver gives up.
    public static let maxFailedAttempts = 3

    /// Accepts connections on `listener` until one completes the
    /// handshake. `refused(peer, failures)` is told of each connection a
    /// long code turned away. Throws `MoveError.wrongShortCode(peer:)` when
    /// a short code is spent, `MoveError.tooManyWrongCodes` after
    /// `maxFailedAttempts` refusals.
    public static func sender(on listener: TCPListener, ownKey: XWing.PrivateKey, token: [UInt8], short: MoveShortCode?,
                              refused: (_ peer: String, _ failures: Int) -> Void) throws -> MoveChannel {
        var failures = 0
        while true {
            let connection = try listener.accept()
            do {
                if let short { return try MoveChannel.accept(connection, shortCode: short, ownKey: ownKey) }
                return try MoveChannel.accept(connection, ownKey: ownKey, token: token)
            } catch MoveError.wrongShortCode {
                throw MoveError.shortCodeSpent(peer: connection.peer)
            } catch VaultError.corruptedOrTampered where short == nil {
                failures += 1
                refused(connection.peer, failures)
                if failures == maxFailedAttempts { throw MoveError.tooManyWrongCodes(count: failures) }
            }
        }
    }
}

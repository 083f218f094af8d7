/// Errors of a device move beyond the vault's own (VaultError): the
/// terminal layer maps each to one message and exit code.
public enum MoveError: Error, Equatable, Sendable {
    /// The receiver did not answer with the keys of its code: a wrong
    /// code, or someone in between.
    case codeMismatch
    /// Hybrid handshake: the receiver's first message is not an X-Wing
    /// public key whose hash is the one in the code (cut short, altered,
    /// or another key: corrupted or tampered).
    case receiverKeyMismatch
    /// Short code, receiver: a sender got as far as its key confirmation
    /// and it failed. That tested one guess of the code, which is now spent.
    case wrongShortCode
    /// Short code, receiver: the sender at `peer` tried a wrong code, so
    /// this one is spent and the receive stops (MoveAccept).
    case shortCodeSpent(peer: String)
    /// Long code, receiver: this many connections did not hold the code;
    /// the receive stops listening (MoveAccept).
    case tooManyWrongCodes(count: Int)
    /// The connection ended before the move was confirmed.
    case connectionLost
    /// The receiver refused what it was sent.
    case refused(MoveRefusal)
}

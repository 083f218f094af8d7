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
    /// The receiver: the file system under `directory` has less free space
    /// than the `bytes` offered (and a margin); nothing was received.
    case noSpace(bytes: UInt64, directory: String)
    /// The sender: the vault holds more files than one move carries
    /// (`MoveMessage.maxFiles`).
    case tooManyFiles(count: Int)
    /// A caller broke one of this module's preconditions: a bug in vault,
    /// never what the other side sent. `MoveMisuse` says which.
    case misuse(MoveMisuse)
}

/// A broken precondition of VaultMove (`MoveError.misuse`).
public enum MoveMisuse: Equatable, Sendable {
    /// A move code of no address, or more than `MoveCode.maxAddresses`.
    case codeAddressCount
    /// An address in a move code that is neither 4 nor 16 bytes.
    case codeAddressLength
    /// A move code on port 0.
    case codePortZero
    /// A move token that is not `MoveCode.tokenLength` bytes.
    case tokenLength
    /// A move code's key field that is not `MoveCode.keyFieldLength` bytes.
    case codeKeyLength
    /// A frame sealed after the final one.
    case frameAfterFinal
    /// A frame longer than `MoveFrame.maxPlaintextLength` (its length).
    case frameLength(Int)
    /// The frame counter reached its maximum.
    case frameCounterExhausted
    /// A staged file finished when none was open.
    case noStagedFile
}

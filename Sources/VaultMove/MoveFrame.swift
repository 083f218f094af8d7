import ByteLayout
import VaultCore
import Foundation
import VaultCrypto

// Move frames (docs/FORMAT.md, "Device move: frames"). Each direction is one
// STREAM under its own key (MoveSession), frames numbered from 0:
//
//   frame     = u32be(L) || AES-256-GCM(direction key, nonce i, aad i, plaintext i)
//               L = |plaintext i| + 16, 16 <= L <= 4 MiB + 17 + 16
//   nonce i   = 4 zero bytes || u64be(i)
//   aad i     = u64be(i) || final flag (1: 0x01 on the last frame, else 0x00)
//
// The final flag travels only inside the authenticated data: the opener tries
// 0x00, then 0x01. A frame out of order, replayed, cut short, or too long
// (refused from its length prefix, before anything is allocated), any frame
// after the final one, and a stream that ends without its final frame all
// fail the same way: `corruptedOrTampered`. After one failure an opener
// refuses everything.

public enum MoveFrame {
    public static let prefixLength = 4
    public static let tagLength = AEADAlgorithm.tagLength
    /// Largest plaintext in one frame: 4 MiB of data plus 17 bytes of message header.
    public static let maxPlaintextLength = 4 << 20 + 17
    public static let maxSealedLength = maxPlaintextLength + tagLength

    static func nonce(_ i: UInt64) -> [UInt8] { [0, 0, 0, 0] + ByteWriter.bigEndian(i) }
    static func aad(_ i: UInt64, final: Bool) -> [UInt8] { ByteWriter.bigEndian(i) + [final ? 1 : 0] }
}

/// Seals one direction's frames, counting from 0.
public final class FrameSealer {
    private let aead: AEAD
    public private(set) var counter: UInt64 = 0
    public private(set) var finished = false

    init(key: SecretBytes) throws { aead = try AEAD(.aes256GCM, key: key) }

    /// `u32be(L) || ciphertext || tag`. Refuses after the final frame.
    public func seal(_ plaintext: [UInt8], final: Bool = false) throws -> [UInt8] {
        let (prefix, body) = try sealParts(plaintext, final: final)
        return prefix + body
    }

    /// The same frame as its 4-byte prefix and its body, so a 4 MiB body is
    /// sent as it is rather than copied behind the prefix.
    public func sealParts(_ plaintext: some ContiguousBytes, final: Bool = false) throws -> (prefix: [UInt8], body: [UInt8]) {
        guard !finished else { throw MoveError.misuse(.frameAfterFinal) }
        let count = plaintext.withUnsafeBytes { $0.count }
        guard count <= MoveFrame.maxPlaintextLength else {
            throw MoveError.misuse(.frameLength(count))
        }
        guard counter < UInt64.max else { throw MoveError.misuse(.frameCounterExhausted) }
        let sealed = try aead.seal(nonce: MoveFrame.nonce(counter), aad: MoveFrame.aad(counter, final: final), plaintext: plaintext)
        counter += 1
        if final { finished = true }
        return (ByteWriter.bigEndian(UInt32(sealed.count)), sealed)
    }
}

/// Opens one direction's frames in order.
public final class FrameOpener {
    private let aead: AEAD
    public private(set) var counter: UInt64 = 0
    public private(set) var finished = false
    private var failed = false

    init(key: SecretBytes) throws { aead = try AEAD(.aes256GCM, key: key) }

    private func fail() -> VaultError { failed = true; return .corruptedOrTampered }

    /// The sealed length announced by a 4-byte prefix, checked against the
    /// bounds before the caller reads (or allocates) the body.
    public func sealedLength(prefix: [UInt8]) throws -> Int {
        var r = ByteReader(prefix)
        guard !failed, !finished, let l = try? r.length(UInt32.self), r.isAtEnd else { throw fail() }
        guard l >= MoveFrame.tagLength, l <= MoveFrame.maxSealedLength else { throw fail() }
        return l
    }

    /// Opens the next frame's body (`ciphertext || tag`); returns the plaintext
    /// and whether it was the final frame.
    public func open(sealed: some ContiguousBytes) throws -> (plaintext: [UInt8], final: Bool) {
        let count = sealed.withUnsafeBytes { $0.count }
        guard !failed, !finished, count >= MoveFrame.tagLength, count <= MoveFrame.maxSealedLength else { throw fail() }
        let n = MoveFrame.nonce(counter)
        for final in [false, true] {
            if let p = try? aead.open(nonce: n, aad: MoveFrame.aad(counter, final: final), sealed: sealed) {
                counter += 1
                if final { finished = true }
                return (p, final)
            }
        }
        throw fail()
    }

    /// Takes one whole frame from the front of `buffer`: nil while the frame is
    /// still incomplete (after the prefix has been bounds-checked).
    public func next(from buffer: inout [UInt8]) throws -> (plaintext: [UInt8], final: Bool)? {
        guard !failed else { throw fail() }
        guard buffer.count >= MoveFrame.prefixLength else { return nil }
        let l = try sealedLength(prefix: Array(buffer[..<MoveFrame.prefixLength]))
        guard buffer.count >= MoveFrame.prefixLength + l else { return nil }
        let body = Array(buffer[MoveFrame.prefixLength..<(MoveFrame.prefixLength + l)])
        let r = try open(sealed: body)
        buffer.removeFirst(MoveFrame.prefixLength + l)
        return r
    }

    /// At the end of the connection: refuses unless the final frame was
    /// opened and nothing is left over (truncation).
    public func finish(leftover: [UInt8] = []) throws {
        guard !failed, finished, leftover.isEmpty else { throw fail() }
    }
}

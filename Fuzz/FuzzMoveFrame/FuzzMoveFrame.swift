// libFuzzer target: the device-move frame stream as a peer reads it (the
// frame opener, then the message parser on every opened frame), on a fixed
// session built from the docs/FORMAT.md "Device move" key-schedule vector.
// Public API only. Built by `make fuzz`.
//
// Input: flags (1) || step (1) || payload.
//   flags bit 0   0: the payload is the raw byte stream (only the frame
//                    vector and replays of it open);
//                 1: the payload is a list of chunks, each sealed here with
//                    the matching FrameSealer, so the message parser sees
//                    authenticated plaintexts:
//                    chunk = control (1) || u16be length || plaintext
//                    control bit 0 final flag, bit 1 drop the frame, bit 2
//                    send it twice, bit 3 flip one bit of it, bit 6 length << 6
//   flags bit 1   which direction is read: 0 the receiver's (s2r), 1 the sender's (r2s)
//   flags bit 2   how: 0 `FrameOpener.next(from:)` on a buffer that grows by
//                 `step` bytes at a time (0: all at once); 1 the way
//                 MoveChannel reads a socket (prefix, `sealedLength`, body,
//                 `open(sealed:)`, then `finish` on what follows the final frame)
// The whole input and the payload also go to `MoveMessage(parsing:)`.
//
// Traps on: a frame that opens to anything other than what was sealed at its
// index; an untampered sealed stream that fails to open; an opener that
// accepts anything after a refusal or bytes after the final frame; a message
// that parses but does not serialise back to the same bytes.
import VaultCore
import VaultMove
import VaultCrypto

private func fixedKey(_ first: UInt8) -> X25519PrivateKey {
    var b = (0..<32).map { first &+ UInt8($0) }
    return try! X25519PrivateKey(secret: SecretBytes(consuming: &b))
}

private let receiverKey = fixedKey(0x00), senderKey = fixedKey(0x20)
private let token = Array(UInt8(0x40)...UInt8(0x4f))
private let receiverSession = try! MoveSession(role: .receiver, ownKey: receiverKey,
                                               peerPublicKey: senderKey.publicKey, token: token)
private let senderSession = try! MoveSession(role: .sender, ownKey: senderKey,
                                             peerPublicKey: receiverKey.publicKey, token: token)

/// A parsed message must be exactly its bytes.
private func parse(_ plaintext: [UInt8]) {
    if let m = try? MoveMessage(parsing: plaintext) {
        precondition(m.bytes == plaintext, "MoveMessage parse/serialise mismatch")
    }
}

private struct Sealed {
    var stream: [UInt8] = []
    var plaintexts: [(plaintext: [UInt8], final: Bool)] = []   // by frame index
    var tampered = false
}

/// Splits `payload` into chunks and seals each with `sealer`.
private func sealChunks(_ payload: ArraySlice<UInt8>, with sealer: FrameSealer) -> Sealed {
    var out = Sealed()
    var i = payload.startIndex
    while i < payload.endIndex {
        let control = payload[i]
        i += 1
        var length = 0
        for _ in 0..<2 where i < payload.endIndex { length = length << 8 | Int(payload[i]); i += 1 }
        if control & 0x40 != 0 { length <<= 6 }
        length = min(length, payload.endIndex - i, MoveFrame.maxPlaintextLength)
        let plaintext = Array(payload[i..<(i + length)])
        i += length
        let final = control & 1 != 0
        let wasFinished = sealer.finished
        let index = sealer.counter
        guard var frame = try? sealer.seal(plaintext, final: final) else {
            precondition(wasFinished, "sealer refused a frame before its final frame")
            continue
        }
        precondition(!wasFinished, "sealer sealed a frame after its final frame")
        precondition(index == UInt64(out.plaintexts.count) && sealer.counter == index + 1, "sealer counter")
        precondition(frame.count == MoveFrame.prefixLength + plaintext.count + MoveFrame.tagLength, "frame length")
        out.plaintexts.append((plaintext, final))
        if control & 0x08 != 0 {
            let bit = Int(control >> 4 & 7), at = (length * 31 + Int(control)) % frame.count
            frame[at] ^= 1 << bit
            out.tampered = true
        }
        if control & 0x02 != 0 { out.tampered = true; continue }
        out.stream += frame
        if control & 0x04 != 0 { out.stream += frame; out.tampered = true }
    }
    return out
}

/// Reads `stream` with `opener`; returns how many frames opened, whether the
/// stream was accepted to its end, and checks every opened frame against
/// `expected` when known.
private func read(_ stream: [UInt8], with opener: FrameOpener, channelStyle: Bool, step: Int,
                  expected: [(plaintext: [UInt8], final: Bool)]?) -> (opened: Int, accepted: Bool) {
    var opened = 0
    var sawFinal = false
    func got(_ r: (plaintext: [UInt8], final: Bool), index: UInt64) {
        precondition(!sawFinal, "a frame opened after the final frame")
        precondition(opener.counter == index + 1 && opener.finished == r.final, "opener counter/finished")
        if let expected {
            precondition(index < UInt64(expected.count), "a frame opened that was never sealed")
            let e = expected[Int(index)]
            precondition(e.plaintext == r.plaintext && e.final == r.final, "a frame opened to other plaintext")
        }
        opened += 1
        sawFinal = r.final
        parse(r.plaintext)
    }
    /// After a refusal the opener must refuse everything.
    func dead() -> (opened: Int, accepted: Bool) {
        var junk: [UInt8] = [0, 0, 0, 16] + [UInt8](repeating: 0, count: 16)
        precondition((try? opener.next(from: &junk)) == nil, "opener alive after a refusal (next)")
        precondition((try? opener.sealedLength(prefix: [0, 0, 0, 16])) == nil, "opener alive after a refusal (sealedLength)")
        precondition((try? opener.finish()) == nil, "opener alive after a refusal (finish)")
        return (opened, false)
    }

    if channelStyle {
        var i = 0
        while !sawFinal {
            guard stream.count - i >= MoveFrame.prefixLength else { return (opened, false) }   // connection lost
            let prefix = Array(stream[i..<(i + MoveFrame.prefixLength)])
            i += MoveFrame.prefixLength
            guard let l = try? opener.sealedLength(prefix: prefix) else { return dead() }
            precondition(l >= MoveFrame.tagLength && l <= MoveFrame.maxSealedLength, "sealedLength out of bounds")
            guard stream.count - i >= l else { return (opened, false) }   // connection lost inside a frame
            let index = opener.counter
            let r = stream.withUnsafeBytes { try? opener.open(sealed: UnsafeRawBufferPointer(rebasing: $0[i..<(i + l)])) }
            i += l
            guard let r else { return dead() }
            got(r, index: index)
        }
        // MoveChannel.expectEnd: one more byte, if the peer sent one.
        let extra = Array(stream[i..<min(i + 1, stream.count)])
        do { try opener.finish(leftover: extra) } catch {
            precondition(!extra.isEmpty, "finish refused a clean end after the final frame")
            return dead()
        }
        precondition(extra.isEmpty, "finish accepted a byte after the final frame")
        return (opened, true)
    }

    var buffer: [UInt8] = []
    var i = 0
    repeat {
        let n = step == 0 ? stream.count - i : min(step, stream.count - i)
        buffer += stream[i..<(i + n)]
        i += n
        while true {
            let index = opener.counter
            let before = buffer.count
            let r: (plaintext: [UInt8], final: Bool)?
            do { r = try opener.next(from: &buffer) } catch { return dead() }
            guard let r else { break }
            precondition(before - buffer.count == MoveFrame.prefixLength + r.plaintext.count + MoveFrame.tagLength,
                         "next(from:) consumed the wrong length")
            got(r, index: index)
        }
    } while i < stream.count
    do { try opener.finish(leftover: buffer) } catch { return dead() }
    precondition(sawFinal && buffer.isEmpty, "finish accepted a stream without its final frame, or with bytes after it")
    return (opened, true)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMoveFrame(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    parse(input)
    guard input.count >= 2 else { return 0 }
    let flags = input[0], step = Int(input[1])
    let payload = input[2...]
    parse(Array(payload))

    // Bit 1 picks which side reads: the receiver opens what the sender seals.
    let (writer, reader) = flags & 2 == 0 ? (senderSession, receiverSession) : (receiverSession, senderSession)
    let opener = try! reader.makeOpener()
    let channelStyle = flags & 4 != 0
    if flags & 1 == 0 {
        _ = read(Array(payload), with: opener, channelStyle: channelStyle, step: step, expected: nil)
    } else {
        let sealed = sealChunks(payload, with: try! writer.makeSealer())
        let r = read(sealed.stream, with: opener, channelStyle: channelStyle, step: step, expected: sealed.plaintexts)
        if !sealed.tampered {
            let final = sealed.plaintexts.last?.final ?? false
            precondition(r.opened == sealed.plaintexts.count, "an untampered sealed frame failed to open")
            precondition(r.accepted == final, "an untampered stream was judged wrongly at its end")
        }
    }
    return 0
}

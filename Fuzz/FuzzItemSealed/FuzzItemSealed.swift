// libFuzzer target: the item reader past the GCM tag. A dropper holds the
// file key of what it drops, so this target seals its own chunks (the nonce
// and associated data of ItemCipher) with a key it holds, and the reader
// sees authenticated plaintexts with any index, final flag, length, trailer
// and padding. Built by `make fuzz`.
//
// Input: mode (1) || flags u16be || tail (1) || body.
//   mode bit 0 = 0: forge. body is a list of records, each sealed as one chunk:
//     record = control (1) || u16be length || plaintext
//     control bit 0 final flag; bits 1-2 index: 0 next, 1 the previous one
//     again, 2 skip one, 3 zero; bit 3 pad the plaintext with zeros to 1 MiB,
//     bit 5 to 32 KiB - 8 (a canonical final chunk, with a trailer); bit 4
//     append u64be(bytes before it, minus the next input byte): a trailer.
//     tail (i8): > 0 appends that many bytes, < 0 cuts that many.
//   mode bit 0 = 1: honest. ItemWriter writes body (repeated to
//     tail * 16 KiB when tail > 64, so items span chunks) in pieces of
//     `flags` bytes (at least 1/64 of it); reading back must give exactly body.
// Every item is read with 1 thread (readAll, readChunk of each chunk,
// contentStream) and with 2 (readAll). Traps on: results that differ between
// the ways of reading; a readAll that succeeds with other than contentLength
// bytes; a readAll that releases, even before it fails, other than the
// plaintexts that were sealed, in order; an honest item that fails to read
// back.
@testable import VaultCore
import VaultCrypto

/// `precondition` whose message survives the -O fuzz build (which drops it).
private func require(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { fatalError(message()) } }

private let key = try! FileKey(secret: SecretBytes(count: FileKey.length))
// libFuzzer calls the target from one thread only.
nonisolated(unsafe) private let aead = try! AEAD(.aes256GCM, key: key.secret)

/// readAll, and with one thread also every chunk by readChunk and
/// contentStream (which never use a second thread): all must agree.
/// `released` is what reached readAll's sink, even if it then failed.
private func read(_ item: [UInt8], threads: Int, batch: Int) -> (length: UInt64, content: [UInt8]?, released: [UInt8])? {
    guard let r = try? ItemReader(key: key, source: MemoryBytes(item), threads: threads) else { return nil }
    let all = MemoryBytes()
    let viaAll = (try? r.readAll(to: all, batchChunks: batch)) == nil ? nil : all.bytes
    if let viaAll { require(UInt64(viaAll.count) == r.contentLength, "readAll released other than contentLength bytes") }
    guard threads == 1 else { return (r.contentLength, viaAll, all.bytes) }
    var viaChunks: [UInt8]? = []
    for i in 0..<r.chunkCount { if let c = try? r.readChunk(i) { viaChunks? += c } else { viaChunks = nil; break } }
    let stream = r.contentStream(), piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 40_000, alignment: 1)
    defer { piece.deallocate() }
    var viaStream: [UInt8]? = []
    do { while case let n = try stream.read(into: piece), n > 0 { viaStream! += piece[..<n] } } catch { viaStream = nil }
    require(viaAll == viaChunks && viaChunks == viaStream, "readAll, readChunk and contentStream disagree")
    return (r.contentLength, viaAll, all.bytes)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzItemSealed(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 4 else { return 0 }
    let flags = UInt16(input[1]) << 8 | UInt16(input[2]), tail = Int(Int8(bitPattern: input[3]))
    var body = Array(input[4...])
    let id = [UInt8](repeating: 0xa0, count: 16), prefix = [UInt8](repeating: 0xc0, count: 8)
    var item: [UInt8], sealed: [UInt8] = []   // what was sealed, record after record
    if input[0] & 1 == 1 {
        if tail > 64, !body.isEmpty {
            let stretched = tail * 16 << 10
            while body.count < stretched { body += body.prefix(stretched - body.count) }
        }
        let header = try! ItemHeader(flags: ItemFlags(rawValue: flags & 3), itemID: id, noncePrefix: prefix)
        let sink = MemoryBytes()
        let w = try! ItemWriter(key: key, header: header, sink: sink, threads: 1 + Int(input[0] >> 1 & 1),
                                batchChunks: 1 + Int(input[0] >> 2 & 1))
        var at = 0
        repeat { let n = min(max(1, Int(flags), body.count >> 6), body.count - at); try! w.write(Array(body[at..<(at + n)])); at += n } while at < body.count
        try! w.finish()
        item = sink.bytes
    } else {
        let header = ItemHeader.magic + [1, 1, UInt8(flags >> 8), UInt8(flags & 0xff)] + id + prefix
        item = header
        var i = 4, index: UInt32 = 0, first = true
        while i < input.count {
            let control = input[i]
            let length = i + 2 < input.count ? min(Int(input[i + 1]) << 8 | Int(input[i + 2]), input.count - i - 3) : 0
            var plain = Array(input[min(i + 3, input.count)..<min(i + 3 + length, input.count)])
            i += 3 + length
            let padTo = control & 8 != 0 ? ItemCipher.chunkSize : control & 32 != 0 ? 32 << 10 - 8 : 0
            plain += [UInt8](repeating: 0, count: max(0, padTo - plain.count))
            if control & 16 != 0 {
                let cut = i < input.count ? Int(input[i]) : 0
                i += 1
                plain += withUnsafeBytes(of: UInt64(max(0, sealed.count + plain.count - cut)).bigEndian, Array.init)
            }
            switch control >> 1 & 3 {
            case 0: index = first ? 0 : index &+ 1
            case 1: break
            case 2: index = first ? 1 : index &+ 2
            default: index = 0
            }
            first = false
            item += try! aead.seal(nonce: ItemCipher.nonce(prefix: prefix, index: index),
                                   aad: ItemCipher.aad(header: header, index: index, final: control & 1 != 0), plaintext: plain)
            sealed += plain
        }
        if tail > 0 { item += [UInt8](repeating: 0x5a, count: tail) } else { item.removeLast(min(-tail, item.count)) }
    }
    let one = read(item, threads: 1, batch: 1 + Int(input[0] >> 3 & 3)), two = read(item, threads: 2, batch: 2)
    require(one?.length == two?.length && one?.content == two?.content, "1 and 2 threads disagree")
    if input[0] & 1 == 1 {
        require(one?.content == body, "an honest item did not read back")
    } else {
        // Even a read that fails part-way releases only what was sealed there.
        for released in [one?.released, two?.released] {
            require(sealed.starts(with: released ?? []), "the reader released bytes that were not sealed there")
        }
    }
    return 0
}

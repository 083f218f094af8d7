// libFuzzer target: absorbing hostile drop-ins, and every reader of what was
// absorbed. Whoever writes the inbox chooses every entry field and holds the
// file key, so this target drops in what it likes, sealed under its own key
// and to the vault's real public key (as Tests/VaultCLITests/HostileDropIn
// does), into a real vault made once on tmpfs (cheap Argon2). Each run: drop
// in, unlock, absorbInbox, read every new entry (and restore it, if a
// folder), check --read-data, unlock again, remove the new entries, empty
// the inbox. Built by `make fuzz`.
//
// Input: kind (1) || origin (1) || mode u16be || size u64be || file count u64be
//        || added i64be || modified i64be || control (1) || copies (1)
//        || name length u16be || name || body
//   control bits 0-1 item flags (compressed, archive); bit 2 the target
//   xz-compresses the content; bit 3 the content is a pax archive built from
//   body, else body itself; bit 4 size and file count are set to what the
//   content holds (for kind 1, the archive's files); bit 5 the item header
//   names another item id; bit 6 no item file. copies (low 2 bits + 1): the
//   same drop-in under that many ids (so names clash); copies bit 7: all of
//   them in one batch envelope (contents `<batch>.<id>.item`), else one
//   single envelope each.
//   Archive body: entries, each type (1: bits 0-1 regular, directory,
//   symlink, hard link; bits 2-7 permissions) || path length (1) || path
//   || data (regular) or link target length (1) || link target.
//
// Traps on: absorb or check throwing; absorbing a drop-in with no item or
// another item's; a file read that succeeds with other than `size` bytes, or
// other than the content dropped; read and check disagreeing on an entry; a
// restore that succeeds where read fails, or leaves anything behind when it
// fails; a vault that no longer unlocks; blobs left behind by remove.
import Foundation
@testable import VaultCodecs
@testable import VaultCore
import VaultCrypto

/// `precondition` whose message survives the -O fuzz build (which drops it).
private func require(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { fatalError(message()) } }

private func password() -> Password { var b = Array("fuzz".utf8); return Password(secret: try! SecretBytes(consuming: &b)) }
private let base = (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory())
    + "/fuzz-absorb-\(getpid())"
private let (root, out) = (base + "/vault", base + "/out")
private let fm = FileManager.default
/// The vault, made once, with one item that stays: `resident.txt`.
private let residentBlob: String = {
    atexit { try? FileManager.default.removeItem(atPath: base) }
    try! fm.createDirectory(atPath: out, withIntermediateDirectories: true)
    let kdf = try! Argon2Parameters(memoryKiB: 8, passes: 1, lanes: 1)
    _ = try! Vault.create(at: root, password: password(), kdf: kdf)
    let e = try! Vault(at: root).dropIn(name: "resident.txt", kind: .file, flags: [], mode: 0o600, modified: 0) {
        try $0.write(Array("resident".utf8)); return (8, 1)
    }
    require(try! unlock().absorbInbox().absorbed == ["resident.txt"], "the resident item was not absorbed")
    return e.blobName
}()
private let attackerKey: FileKey = { var k = [UInt8](repeating: 0x42, count: 32); return try! FileKey(secret: SecretBytes(consuming: &k)) }()
nonisolated(unsafe) private var run: UInt64 = 0

private func unlock() throws -> UnlockedVault { try Vault(at: root).unlock(password: password(), forWriting: true) }

/// Keeps the first 1 MiB written and counts the rest (a compressed item may
/// claim any size).
private final class Capture: ByteSink {
    var bytes: [UInt8] = [], count: UInt64 = 0
    func write(_ b: UnsafeRawBufferPointer) throws { if bytes.count < 1 << 20 { bytes += b.prefix(1 << 20 - bytes.count) }; count += UInt64(b.count) }
}

/// A pax archive of the entries in `body`, and its files and bytes.
private func archive(_ body: ArraySlice<UInt8>) -> (bytes: [UInt8], files: UInt64, size: UInt64) {
    let sink = MemoryBytes(), w = try! PaxWriter(sink: sink)
    var i = body.startIndex, files: UInt64 = 0, size: UInt64 = 0
    func take() -> [UInt8] {
        let n = i < body.endIndex ? Int(body[i]) : 0
        defer { i = min(i + 1 + n, body.endIndex) }
        return Array(body[min(i + 1, body.endIndex)..<min(i + 1 + n, body.endIndex)])
    }
    while i < body.endIndex {
        let type = body[i]; i += 1
        let kinds: [PaxEntry.Kind] = [.regular, .directory, .symlink, .hardlink]
        var e = PaxEntry(path: take(), kind: kinds[Int(type & 3)])
        e.permissions = 0o600 | UInt32(type >> 2) << 3
        let more = take()
        if e.kind == .regular { e.size = UInt64(more.count) } else if e.kind != .directory { e.linkTarget = more }
        guard (try? w.writeHeader(e)) != nil else { continue }
        if e.kind == .regular { _ = try? more.withUnsafeBytes { try w.writeData($0) }; size += e.size }
        if (try? w.finishEntry()) != nil, e.kind == .regular || e.kind == .hardlink { files += 1 }
    }
    try? w.close()
    return (sink.bytes, files, size)
}

private func makeWritable(_ path: String) {
    var st = stat()
    guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { return }
    _ = chmod(path, 0o700)
    for name in (try? fm.contentsOfDirectory(atPath: path)) ?? [] { makeWritable(path + "/" + name) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAbsorb(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 40, input.count <= 64 << 10 else { return 0 }
    _ = residentBlob
    func u64(_ at: Int) -> UInt64 { input[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
    let control = input[36], copies = Int(input[37] & 3) + 1, batched = input[37] & 0x80 != 0
    let name = input[40..<min(40 + (Int(input[38]) << 8 | Int(input[39])), input.count)], body = input[(40 + name.count)...]
    var content = Array(body), (files, bytes) = (UInt64(1), UInt64(body.count))
    if control & 8 != 0 { (content, files, bytes) = archive(body) }
    let (fileSize, fileCount) = control & 16 == 0 ? (u64(4), u64(12)) : input[0] == 1 ? (bytes, files) : (UInt64(content.count), 1)
    // What a file read must release: the content, decoded if both the item
    // says and the target made it xz; unknown if only the item says so.
    let expected: [UInt8]? = control & 1 == 0 || control & 4 != 0 ? content : nil
    if control & 4 != 0 {
        let sink = MemoryBytes(), xz = try! XZCompressor(level: 0, threads: 1, downstream: sink)
        try! content.withUnsafeBytes { try xz.write($0) }
        try! xz.finish()
        content = sink.bytes
    }
    let header = try! VaultHeader(parsing: Array(try! Data(contentsOf: URL(fileURLWithPath: root + "/vault.header"))))
    run += 1
    let batchID = Hex.encode(withUnsafeBytes(of: run.bigEndian, Array.init) + [UInt8](repeating: 0xba, count: 8))
    var batch: [UInt8] = [0, UInt8(copies)]
    for copy in 0..<copies {
        run += 1
        let id = withUnsafeBytes(of: run.bigEndian, Array.init) + [UInt8(copy)] + [UInt8](repeating: 0xd0, count: 7)
        let itemHeader = try! ItemHeader(flags: ItemFlags(rawValue: UInt16(control & 3)), itemID: control & 32 != 0 ? id.map { $0 ^ 1 } : id,
                                         noncePrefix: [UInt8](repeating: 7, count: 8))
        let sink = MemoryBytes(), w = try! ItemWriter(key: attackerKey, header: itemHeader, sink: sink, threads: 1, batchChunks: 1)
        try! w.write(content)
        try! w.finish()
        var payload = id + attackerKey.withUnsafeBytes { Array($0) } + input[0..<4] + withUnsafeBytes(of: fileSize.bigEndian, Array.init)
        payload += withUnsafeBytes(of: fileCount.bigEndian, Array.init) + input[20..<36] + [UInt8(name.count >> 8 & 0xff), UInt8(name.count & 0xff)] + name
        let path = root + "/inbox/" + (batched ? batchID + "." : "") + Hex.encode(id)
        if control & 64 == 0 { try! Data(sink.bytes).write(to: URL(fileURLWithPath: path + ".item")) }
        if batched { batch += payload; continue }
        try! Data(DropInEnvelope.seal(payload: payload, to: header.publicKey, vaultID: header.vaultID)).write(to: URL(fileURLWithPath: path + ".env"))
    }
    if batched {
        try! Data(DropInEnvelope.seal(payload: batch, to: header.publicKey, vaultID: header.vaultID, batch: true))
            .write(to: URL(fileURLWithPath: root + "/inbox/" + batchID + ".env"))
    }

    var names: [String] = []
    do {
        let v = try! unlock()
        let report = try! v.absorbInbox()
        // A batch is refused whole (one envelope) or absorbed whole: its
        // copies differ only in their ids.
        require(report.absorbed.count + report.rejected.count == (batched && report.absorbed.isEmpty ? 1 : copies)
                && report.deferred == 0, "absorb lost a drop-in")
        require(report.absorbed.isEmpty || control & 96 == 0, "absorbed a drop-in without its own item")
        // By blob: drop-ins under one name are versions of one item.
        var readable: [String: Bool] = [:]
        func problem(_ e: ManifestEntry, _ c: CheckReport) -> Bool {
            let several = v.manifest.versions(named: e.name).count > 1
            return c.problems.contains { $0.item == e.name && $0.version == (several ? e.version : nil) }
        }
        for e in v.manifest.entries where e.blobName != residentBlob {
            let sink = Capture()
            do {
                try v.read(e, to: sink)
                readable[e.blobName] = true
                if e.kind == .file {
                    require(sink.count == e.size, "a file read released other than its size")
                    if let expected, expected.count < 1 << 20 { require(sink.bytes == expected, "a file read released other bytes than were dropped") }
                }
            } catch VaultError.itemCorrupted, VaultError.unsafeArchiveEntry { readable[e.blobName] = false } catch {
                fatalError("read threw \(error)")
            }
            guard e.kind == .folder else { continue }
            let restored = (try? v.restoreFolder(e, to: out + "/folder")) != nil
            require(!restored || readable[e.blobName]!, "restore released a folder that read refuses")
            require((try! fm.contentsOfDirectory(atPath: out)) == (restored ? ["folder"] : []), "restore left something behind")
            makeWritable(out + "/folder")
            try? fm.removeItem(atPath: out + "/folder")
        }
        let check = try! v.check(readData: true, repair: false)
        let resident = v.manifest.entries.first { $0.blobName == residentBlob }!
        require(!problem(resident, check), "check: the resident item broke")
        for e in v.manifest.entries where e.blobName != residentBlob {
            require(problem(e, check) != readable[e.blobName]!, "check --read-data and read disagree on '\(e.name)'")
        }
        names = v.manifest.entries.map(\.name)
    }   // the writer lock goes with `v`
    let v = try! unlock()   // the manifest absorb saved must open
    require(v.manifest.entries.map(\.name) == names, "the manifest reopened with other entries")
    try! v.remove(names.filter { $0 != "resident.txt" })
    // Drop-ins named "resident.txt" became its newer versions.
    try! v.forget(v.manifest.entries.filter { $0.blobName != residentBlob })
    require((try! fm.contentsOfDirectory(atPath: root + "/items")) == [residentBlob], "remove left blobs behind")
    for f in try! fm.contentsOfDirectory(atPath: root + "/inbox") { try! fm.removeItem(atPath: root + "/inbox/" + f) }
    return 0
}

// libFuzzer target: decrypted manifest plaintext (what the manifest key
// opens: the AEAD is skipped, not defeated), and the changes made to a
// parsed manifest. Whatever parses, and whatever a change accepts, must seal
// and reopen to the same entries: the writer never saves what the reader
// refuses. Built by `make fuzz`.
//
// Input: capacity (1) || plaintext length u16be || plaintext (format version
//   3: records of version number and entry) || operations
//   capacity 0: the real limit (256 MiB), else 44 + 64 * capacity bytes, so
//   "manifest full" is reachable. If the plaintext does not parse, the
//   operations run on an empty manifest.
//   operation = op (1) || index (1) || name length u16be || name
//   op % 4: 0 rename entry [index] to name, 1 add an entry named name,
//   2 add an entry named name as its newest version (addVersion), 3 remove
//   entry [index] (every version of its name);
//   op bits 2-7 vary the added entry's kind, origin, mode and size.
@testable import VaultCore
import VaultCrypto

/// `precondition` whose message survives the -O fuzz build (which drops it).
private func require(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { fatalError(message()) } }

private let key = try! SecretBytes(count: 32), vaultID = [UInt8](repeating: 0x20, count: 16)
nonisolated(unsafe) private var nextID: UInt64 = 0

private func same(_ a: ManifestEntry, _ b: ManifestEntry) -> Bool {
    a.itemID == b.itemID && a.fileKey.secret == b.fileKey.secret && a.kind == b.kind && a.origin == b.origin
        && a.mode == b.mode && a.size == b.size && a.fileCount == b.fileCount && a.added == b.added
        && a.modified == b.modified && Array(a.name.utf8) == Array(b.name.utf8) && a.version == b.version
}

/// Seals and reopens `m`; traps unless it reopens to the same entries.
private func roundTrip(_ m: Manifest, capacity: Int, _ what: String) {
    let file: [UInt8]
    do { file = try m.sealed(key: key, vaultID: vaultID) } catch { fatalError("\(what): sealed() threw \(error)") }
    require(file.count <= capacity, "\(what): sealed past the capacity")
    guard let back = try? Manifest.open(file, key: key, vaultID: vaultID, capacity: capacity) else {
        fatalError("\(what): the sealed manifest does not reopen")
    }
    require(back.entries.count == m.entries.count && zip(back.entries, m.entries).allSatisfy(same),
                 "\(what): reopened with other entries")
    require(back.plaintextSize == m.plaintextSize, "\(what): plaintext size drifted")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifestEntries(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 3 else { return 0 }
    let capacity = input[0] == 0 ? Manifest.maxFileSize : 44 + 64 * Int(input[0])
    let end = min(3 + (Int(input[1]) << 8 | Int(input[2])), input.count)
    var m: Manifest
    if let parsed = input[3..<end].withUnsafeBytes({ try? Manifest.parse(plaintext: $0, capacity: capacity) }) {
        m = parsed
        roundTrip(m, capacity: capacity, "parse")
    } else {
        m = try! Manifest(entries: [], capacity: capacity)
    }
    var i = end
    while i + 4 <= input.count {
        let (op, index, length) = (input[i], Int(input[i + 1]), Int(input[i + 2]) << 8 | Int(input[i + 3]))
        let name = String(decoding: input[(i + 4)..<min(i + 4 + length, input.count)], as: UTF8.self)
        i += 4 + length
        let target = m.entries.isEmpty ? nil : m.entries[index % m.entries.count]
        switch op % 4 {
        case 0:
            guard let target, (try? m.rename(target.name, to: name)) != nil else { continue }
            require(m.versions(named: name).contains { $0.itemID == target.itemID }
                    && !(Array(target.name.utf8) != Array(name.utf8) && m.contains(name: target.name)), "rename")
        case 3:
            guard let target else { continue }
            let versions = m.versions(named: target.name).count   // remove takes every version
            require((try? m.remove(named: [target.name]))?.count == versions && !m.contains(name: target.name), "remove")
        default:
            let n = name
            nextID += 1
            var id = [UInt8](repeating: 0, count: 8) + withUnsafeBytes(of: nextID.bigEndian, Array.init)
            if op & 4 != 0, let target { id = target.itemID }   // a duplicate id must be refused
            guard let e = try? ManifestEntry(itemID: id, fileKey: FileKey(secret: SecretBytes(count: 32)), kind: op & 8 == 0 ? .file : .folder,
                                             origin: op & 16 == 0 ? .unlocked : .droppedIn, mode: UInt16(op >> 5) << 9 | 0o644,
                                             size: op & 32 == 0 ? 0 : .max, fileCount: 1, added: .min, modified: .max, name: n)
            else { continue }
            let fits = m.hasRoom(nameBytes: n.utf8.count)
            let before = m.versions(named: n).last?.version ?? 0
            let added = op % 4 == 2 ? (try? m.addVersion(e)).map { $0.version == before + 1 } : (try? m.add(e)).map { true }
            require(added != false, "addVersion numbered other than newest + 1")
            require(added == nil || (fits && (op & 4 == 0 || target == nil)), "add accepted a duplicate id or an entry with no room")
            guard added != nil else { continue }
            require(m.versions(named: n).count <= Manifest.maxVersions, "a name passed maxVersions")
        }
        roundTrip(m, capacity: capacity, "after op \(op % 4)")
    }
    return 0
}

import ByteLayout
import System
import VaultCrypto

// Rekey switch, file `rekey.pending` (docs/FORMAT.md, "Rekey"):
//
//   magic "VAULTRKY" (8) || version 0x03 || 3 zero bytes
//   || SHA-256 of the vault.header it replaces (32)
//   || u32be header length || new header (any version)
//   || u32be n || n item ids (16 each) || new manifest || MAC (32)
//   MAC        = HMAC-SHA256(switch key, every byte before it)
//   switch key = HKDF-SHA256(new VMK, salt = vault id, info = "vault v1 rekey switch")
//
// The item ids are drop-ins the rekey absorbed into the new manifest: their
// inbox files go with the switch. A rekey writes every item again under new
// keys, then this one file (atomically), then the header and the manifest,
// removes those inbox files, then deletes it. The header and manifest cannot
// be replaced together in one rename; this file can. While it exists it is
// the truth: readers take the header and manifest from it and the next
// writer finishes the switch. So a kill at any moment leaves the old state
// or the new one, never a mix.
//
// It binds itself to this vault before anything acts on it: its header must
// carry the vault's id, and the header it replaces must be the one in place
// (or, after a switch interrupted midway, its new header must be), both
// checked before unlocking; its MAC under the new master key is checked
// after. A file that fails the first checks is ignored (and reported as an
// orphan by `check`); one that fails its MAC is damage. Version 1 (no hash,
// list or MAC), written by earlier versions, is honoured with the id check;
// version 2 (no header length; the 182-byte version-1 header) is read too.

struct RekeySwitch {
    static let magic = Array("VAULTRKY".utf8)
    static let version: UInt8 = 3
    static let macLength = HMACSHA256.length

    let header: VaultHeader
    let absorbed: [[UInt8]]
    /// The file up to its MAC (what the MAC covers; for version 1, which has
    /// none, the whole file). The new manifest is a range of it rather than
    /// a copy: at 130,000 items a manifest is tens of MiB, and a rekey's
    /// peak memory is when this is written.
    private let body: [UInt8]
    private let manifestRange: Range<Int>
    private let mac: [UInt8]?

    var manifest: ArraySlice<UInt8> { body[manifestRange] }

    /// The switch to `header` and `manifest` (sealed here under
    /// `manifestKey`, straight into the file's bytes).
    init(replacing current: VaultHeader, with header: VaultHeader, manifest: Manifest, manifestKey: SecretBytes,
         absorbed: [[UInt8]], masterKey: MasterKey) throws {
        var w = ByteWriter(Self.magic + [Self.version, 0, 0, 0])
        w.bytes(try SHA256.hash(current.bytes))
        w.u32(UInt32(header.bytes.count))
        w.bytes(header.bytes)
        w.u32(UInt32(absorbed.count))
        for id in absorbed { w.bytes(id) }
        let head = w.bytes
        var b = [UInt8]()
        b.reserveCapacity(head.count + manifest.sealedSize)
        b += head
        try manifest.seal(appendingTo: &b, key: manifestKey, vaultID: header.vaultID)
        let mac = try HMACSHA256.authenticate(key: masterKey.rekeySwitchKey(vaultID: header.vaultID), data: b)
        self.init(header: header, absorbed: absorbed, body: b, manifestRange: head.count..<b.count, mac: mac)
    }

    /// Writes the file atomically (`VaultDirectory.atomicWrite`), the body
    /// and the MAC as they are, without joining them into a third copy.
    func write(to path: String) throws {
        let temp = try TempFile(beside: path, mode: nil)
        try body.withUnsafeBytes { try temp.file.write($0) }
        if let mac { try mac.withUnsafeBytes { try temp.file.write($0) } }
        try temp.commit(to: path)
    }

    static func parse(_ b: [UInt8], current: VaultHeader) throws -> RekeySwitch? {
        guard b.count > 12 else { throw VaultError.corruptedOrTampered }
        var r = ByteReader(b)
        let version = try field {
            try r.expect(magic)
            let v = try r.u8()
            try r.expect([0, 0, 0])
            return v
        }
        if version == 1 {
            guard r.remaining > VaultHeader.v1Length else { throw VaultError.corruptedOrTampered }
            let header = try VaultHeader(parsing: try field { try r.bytes(VaultHeader.v1Length) })
            guard header.vaultID == current.vaultID else { return nil }
            return RekeySwitch(header: header, absorbed: [], body: b, manifestRange: r.offset..<b.count, mac: nil)
        }
        guard version == 2 || version == Self.version else { throw VaultError.corruptedOrTampered }
        let (replaced, headerLength) = try field {
            let hash = try r.bytes(32)
            // Version 2 has no header length: its header is version 1's.
            if version == 2 { return (hash, VaultHeader.v1Length) }
            return (hash, try r.length(UInt32.self, max: VaultHeader.maxLength))
        }
        guard r.remaining >= headerLength + 4 + macLength else { throw VaultError.corruptedOrTampered }
        // Everything between the header hash and the MAC.
        var fields = try field { try r.reader(r.remaining - macLength) }
        let macStart = b.count - macLength
        let header = try VaultHeader(parsing: try field { try fields.bytes(headerLength) })
        let count = try field { try fields.length(UInt32.self) }
        guard count <= fields.remaining / ItemHeader.itemIDLength else { throw VaultError.corruptedOrTampered }
        var absorbed: [[UInt8]] = []
        absorbed.reserveCapacity(count)
        for _ in 0..<count { absorbed.append(try field { try fields.bytes(ItemHeader.itemIDLength) }) }
        // The rest of `fields` is the new manifest.
        let manifestStart = macStart - fields.remaining
        guard header.vaultID == current.vaultID,
              replaced == (try SHA256.hash(current.bytes)) || header == current else { return nil }
        return RekeySwitch(header: header, absorbed: absorbed, body: Array(b[..<macStart]),
                           manifestRange: manifestStart..<macStart, mac: Array(b[macStart...]))
    }

    /// Fields read from the file: a short one is `corruptedOrTampered`.
    private static func field<T>(_ read: () throws -> T) throws -> T {
        do { return try read() } catch { throw VaultError.corruptedOrTampered }
    }

    private init(header: VaultHeader, absorbed: [[UInt8]], body: [UInt8], manifestRange: Range<Int>, mac: [UInt8]?) {
        (self.header, self.absorbed, self.body, self.manifestRange, self.mac) = (header, absorbed, body, manifestRange, mac)
    }

    static func read(_ paths: VaultPaths, current: VaultHeader) throws -> RekeySwitch? {
        guard try Syscall.status(of: paths.rekeyPending) != nil else { return nil }
        let limit = 12 + 32 + 4 + VaultHeader.maxLength + 4 + Manifest.maxEntries * ItemHeader.itemIDLength
            + Manifest.maxFileSize + macLength
        return try parse(VaultDirectory.readFile(paths.rekeyPending, limit: limit), current: current)
    }

    /// Checks the MAC with the new master key (a version 1 file has none).
    func verify(masterKey: MasterKey) throws {
        guard let mac else { return }
        guard try HMACSHA256.verify(mac, key: masterKey.rekeySwitchKey(vaultID: header.vaultID), data: body) else {
            throw VaultError.corruptedOrTampered
        }
    }

    /// Puts the new header and manifest in place, removes the absorbed
    /// drop-ins' inbox files, then removes this file. Idempotent: a writer
    /// that finds the file runs it again.
    func apply(_ paths: VaultPaths) throws {
        try VaultDirectory.atomicWrite(header.bytes, to: paths.header, mode: Vault.headerMode(paths))
        try VaultDirectory.atomicWrite(manifest, to: paths.manifest)
        if !absorbed.isEmpty {
            Self.removeDropIns(Set(absorbed.map { Hex.encode($0) }), in: paths)
            try Syscall.fsyncDirectory(paths.inbox)
        }
        try Syscall.unlink(paths.rekeyPending)
        try Syscall.fsyncDirectory(paths.root)
        // Folder index files are sealed under the old master key: none
        // outlives it (the next mount writes them anew under the new one).
        _ = Eraser.erase(FilePath(paths.indexes))
    }

    /// Removes the inbox files of the drop-ins `ids` (hex) that the rekey
    /// took in: a single one's envelope and content; a batch's contents
    /// `<batch>.<id>.item`, after the batch's envelope if it names no other
    /// content (one that did not open or agree keeps it). Envelope before
    /// contents, as absorb does, so a run cut short and run again finds
    /// what is left by name.
    /// Best effort, each `try?` of it: a drop-in left in the inbox has an id
    /// the new manifest holds as a tombstone, so the next absorb sets it
    /// aside (quarantine/) rather than take it in twice.
    private static func removeDropIns(_ ids: Set<String>, in paths: VaultPaths) {
        for blob in ids {
            for p in [paths.dropInEnvelope(blob), paths.dropInContent(blob)] { try? Syscall.unlink(p) }   // best effort: see above
        }
        var taken: [String] = [], wholeBatch: [Substring: Bool] = [:]
        // Best effort: see above.
        for name in (try? VaultDirectory.names(in: paths.inbox)) ?? [] where name.hasSuffix(".item") {
            let stem = VaultPaths.envelopeStem(ofContent: name)
            guard name.count > stem.count + 5 else { continue }  // a single drop-in's
            let isTaken = ids.contains(String(name.dropFirst(stem.count + 1).dropLast(5)))
            if isTaken { taken.append(name) }
            wholeBatch[stem] = (wholeBatch[stem] ?? true) && isTaken
        }
        for (stem, whole) in wholeBatch where whole { try? Syscall.unlink(paths.dropInEnvelope(String(stem))) }   // best effort
        for name in taken { try? Syscall.unlink(paths.inbox + "/" + name) }   // best effort
    }
}

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
        let head = Self.magic + [Self.version, 0, 0, 0] + (try SHA256.hash(current.bytes))
            + withUnsafeBytes(of: UInt32(header.bytes.count).bigEndian, Array.init) + header.bytes
            + withUnsafeBytes(of: UInt32(absorbed.count).bigEndian, Array.init) + absorbed.flatMap { $0 }
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
        guard b.count > 12, Array(b[0..<8]) == magic, b[9..<12].allSatisfy({ $0 == 0 }) else {
            throw VaultError.corruptedOrTampered
        }
        if b[8] == 1 {
            let start = 12 + VaultHeader.v1Length
            guard b.count > start else { throw VaultError.corruptedOrTampered }
            let header = try VaultHeader(parsing: Array(b[12..<start]))
            guard header.vaultID == current.vaultID else { return nil }
            return RekeySwitch(header: header, absorbed: [], body: b, manifestRange: start..<b.count, mac: nil)
        }
        let headerStart: Int, headerLength: Int
        switch b[8] {
        case 2: (headerStart, headerLength) = (12 + 32, VaultHeader.v1Length)
        case version:
            guard b.count >= 12 + 32 + 4 else { throw VaultError.corruptedOrTampered }
            headerLength = b[44..<48].reduce(0) { $0 << 8 | Int($1) }
            headerStart = 12 + 32 + 4
            guard headerLength <= VaultHeader.maxLength else { throw VaultError.corruptedOrTampered }
        default: throw VaultError.corruptedOrTampered
        }
        guard b.count >= headerStart + headerLength + 4 + macLength else { throw VaultError.corruptedOrTampered }
        let listStart = headerStart + headerLength
        let header = try VaultHeader(parsing: Array(b[headerStart..<listStart]))
        let count = b[listStart..<(listStart + 4)].reduce(0) { $0 << 8 | Int($1) }
        let idsStart = listStart + 4, macStart = b.count - macLength
        guard count <= (macStart - idsStart) / ItemHeader.itemIDLength else { throw VaultError.corruptedOrTampered }
        let manifestStart = idsStart + count * ItemHeader.itemIDLength
        let absorbed = stride(from: idsStart, to: manifestStart, by: ItemHeader.itemIDLength).map {
            Array(b[$0..<($0 + ItemHeader.itemIDLength)])
        }
        guard header.vaultID == current.vaultID,
              Array(b[12..<44]) == (try SHA256.hash(current.bytes)) || header == current else { return nil }
        return RekeySwitch(header: header, absorbed: absorbed, body: Array(b[..<macStart]),
                           manifestRange: manifestStart..<macStart, mac: Array(b[macStart...]))
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
        for id in absorbed {
            let blob = Hex.encode(id)
            for p in [paths.dropInEnvelope(blob), paths.dropInContent(blob)] { try? Syscall.unlink(p) }
        }
        if !absorbed.isEmpty { try Syscall.fsyncDirectory(paths.inbox) }
        try Syscall.unlink(paths.rekeyPending)
        try Syscall.fsyncDirectory(paths.root)
    }
}

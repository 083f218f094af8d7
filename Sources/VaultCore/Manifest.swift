import VaultCrypto

// Manifest, file `manifest` (docs/FORMAT.md, "Manifest"):
//
//   magic "VAULTMAN" (8) || version 0x01 || 3 zero bytes || nonce (12)
//   || AES-256-GCM(manifest key, nonce, aad = vault id (16) || bytes 0..<24, plaintext)
//   plaintext = u32be entry count || entries (ManifestEntry.swift)
//
// The nonce is random per write; a manifest key sees one nonce per manifest
// write, far below the 2^32 random-nonce limit for AES-GCM.

public struct Manifest: Sendable {
    public static let magic = Array("VAULTMAN".utf8)
    public static let version: UInt8 = 1
    static let prefixLength = 24
    /// Bounds on what a manifest may hold, checked while parsing.
    public static let maxEntries = 1_000_000
    public static let maxFileSize = 256 << 20

    public private(set) var entries: [ManifestEntry]
    /// Indexes into `entries`, so lookups and the uniqueness checks of a
    /// 10,000-item manifest stay linear overall, not quadratic.
    private var byName: [String: Int] = [:]
    private var byID: [[UInt8]: Int] = [:]

    public init(entries: [ManifestEntry] = []) throws {
        self.entries = []
        for e in entries { try add(e) }
    }

    public func entry(named name: String) -> ManifestEntry? { byName[name].map { entries[$0] } }
    public func entry(itemID: [UInt8]) -> ManifestEntry? { byID[itemID].map { entries[$0] } }

    public mutating func add(_ e: ManifestEntry) throws {
        guard byName[e.name] == nil else { throw VaultError.alreadyExists(path: e.name) }
        guard byID[e.itemID] == nil else { throw VaultError.invalidArgument("duplicate item id") }
        guard entries.count < Self.maxEntries else { throw VaultError.invalidArgument("too many items") }
        byName[e.name] = entries.count
        byID[e.itemID] = entries.count
        entries.append(e)
    }

    public mutating func remove(named name: String) -> ManifestEntry? {
        guard let i = byName[name] else { return nil }
        let e = entries.remove(at: i)
        reindex()
        return e
    }

    public mutating func rename(_ name: String, to newName: String) throws {
        try ManifestEntry.checkName(newName)
        guard let i = byName[name] else { throw VaultError.noSuchItem(name: name) }
        guard byName[newName] == nil else { throw VaultError.alreadyExists(path: newName) }
        entries[i].name = newName
        reindex()
    }

    /// Replaces the entry of the same name (its item id may change).
    public mutating func replace(_ e: ManifestEntry) {
        guard let i = byName[e.name] else { return }
        entries[i] = e
        reindex()
    }

    private mutating func reindex() {
        byName = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.name, $0) })
        byID = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.itemID, $0) })
    }

    /// The sealed file bytes.
    func sealed(key: SecretBytes, vaultID: [UInt8], nonce: [UInt8] = SecureRandom.bytes(12)) throws -> [UInt8] {
        // Reserve the exact size up front so the array never reallocates
        // (which would leave copies of file keys in freed memory), then zero it.
        var plain = [UInt8]()
        plain.reserveCapacity(4 + entries.reduce(0) { $0 + $1.encodedLength })
        plain += withUnsafeBytes(of: UInt32(entries.count).bigEndian, Array.init)
        for e in entries { e.encode(into: &plain) }
        defer { SecureZero.zero(&plain) }
        let prefix = Self.magic + [Self.version, 0, 0, 0] + nonce
        let sealed = try AEAD(.aes256GCM, key: key).seal(nonce: Array(prefix[12..<24]), aad: vaultID + prefix,
                                                         plaintext: plain)
        return prefix + sealed
    }

    /// Opens and parses a sealed manifest: exact shape, every entry valid,
    /// unique names and ids, no trailing bytes.
    static func open(_ file: [UInt8], key: SecretBytes, vaultID: [UInt8]) throws -> Manifest {
        guard file.count >= prefixLength + AEADAlgorithm.tagLength + 4, file.count <= maxFileSize,
              Array(file[0..<8]) == magic, file[8] == version, file[9..<12].allSatisfy({ $0 == 0 }) else {
            throw VaultError.corruptedOrTampered
        }
        let plain: SecretBytes
        do {
            plain = try AEAD(.aes256GCM, key: key).openSecret(nonce: Array(file[12..<24]),
                                                             aad: vaultID + Array(file[0..<24]),
                                                             sealed: Array(file[24...]))
        } catch CryptoError.authenticationFailed { throw VaultError.corruptedOrTampered }
        return try plain.withUnsafeBytes { try parse(plaintext: $0, keys: plain) }
    }

    /// Parses a decrypted manifest: exact shape, unique names and ids. With
    /// `keys` (the guarded buffer `b` views), file keys are shared from it.
    static func parse(plaintext b: UnsafeRawBufferPointer, keys: SecretBytes? = nil) throws -> Manifest {
        guard b.count >= 4 else { throw VaultError.corruptedOrTampered }
        let count = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        guard count <= maxEntries else { throw VaultError.corruptedOrTampered }
        var offset = 4
        var m = try Manifest()
        for _ in 0..<count {
            do { try m.add(try ManifestEntry.decode(b, offset: &offset, keys: keys)) } catch { throw VaultError.corruptedOrTampered }
        }
        guard offset == b.count else { throw VaultError.corruptedOrTampered }
        return m
    }
}

import VaultCrypto

// Manifest, file `manifest` (docs/FORMAT.md, "Manifest"):
//
//   magic "VAULTMAN" (8) || version 0x02 || 3 zero bytes || generation u64be
//   || nonce (12) || AES-256-GCM(manifest key, nonce, aad = vault id (16) || bytes 0..<32, plaintext)
//   plaintext = u32be entry count || entries (ManifestEntry.swift)
//
// Version 1 (read, never written) has no generation: bytes 0..<24 are magic,
// version, zeros and nonce, and they are the aad. The generation counts the
// manifest's writes and is authenticated with it, so an older manifest put
// back in place is recognisable (RollbackGuard). The nonce is random per
// write; a manifest key sees one nonce per manifest write, far below the
// 2^32 random-nonce limit for AES-GCM.

public struct Manifest: Sendable {
    public static let magic = Array("VAULTMAN".utf8)
    public static let version: UInt8 = 2
    static let prefixLength = 32
    static let version1PrefixLength = 24
    /// Bounds on what a manifest may hold, checked while parsing, and by
    /// every change before it is saved: the writer never saves a manifest
    /// the reader would refuse.
    public static let maxEntries = 1_000_000
    public static let maxFileSize = 256 << 20

    public private(set) var entries: [ManifestEntry]
    /// Indexes into `entries`, so lookups and the uniqueness checks of a
    /// 100,000-item manifest stay linear overall, not quadratic. Names are
    /// keyed by their UTF-8 bytes: FORMAT.md compares names byte for byte,
    /// where Swift's String equality would merge canonically equivalent ones.
    private var byName: [ByteKey: Int] = [:]
    private var byID: [ByteKey: Int] = [:]
    /// The plaintext's size: 4 + the sum of the entries' encoded lengths.
    public private(set) var plaintextSize = 4
    /// How many times this vault's manifest has been written (0 for a
    /// version 1 manifest, which did not count). `sealed` writes it as is;
    /// `UnlockedVault.saveManifest` raises it first.
    public var generation: UInt64 = 0
    /// The file size this manifest may seal to: `maxFileSize`, smaller only
    /// in tests (which fill it to the brim without 256 MiB of names).
    let capacity: Int
    var plaintextCapacity: Int { capacity - Self.prefixLength - AEADAlgorithm.tagLength }

    public init(entries: [ManifestEntry] = []) throws { try self.init(entries: entries, capacity: Self.maxFileSize) }

    init(entries: [ManifestEntry], capacity: Int) throws {
        self.capacity = capacity
        self.entries = []
        self.entries.reserveCapacity(entries.count)
        for e in entries { try add(e) }
    }

    /// The items' total size, for progress displays. Sizes come from drop-in
    /// envelopes, which anyone can write, so the sum saturates, never traps.
    public var totalSize: UInt64 {
        entries.reduce(UInt64(0)) { total, e in
            let (sum, overflow) = total.addingReportingOverflow(e.size)
            return overflow ? .max : sum
        }
    }

    public func entry(named name: String) -> ManifestEntry? { byName[ByteKey(name)].map { entries[$0] } }
    public func entry(itemID: [UInt8]) -> ManifestEntry? { byID[ByteKey(itemID)].map { entries[$0] } }
    public func contains(name: String) -> Bool { byName[ByteKey(name)] != nil }

    /// Whether `extra` more entries with names of `nameBytes` bytes in all still fit.
    func hasRoom(entries extra: Int = 1, nameBytes: Int) -> Bool {
        entries.count + extra <= Self.maxEntries
            && plaintextSize + extra * ManifestEntry.fixedLength + nameBytes <= plaintextCapacity
    }

    public mutating func add(_ e: ManifestEntry) throws {
        let name = ByteKey(e.name), id = ByteKey(e.itemID)
        guard byName[name] == nil else { throw VaultError.alreadyExists(path: e.name) }
        guard byID[id] == nil else { throw VaultError.invalidArgument("duplicate item id") }
        guard hasRoom(nameBytes: name.bytes.count) else { throw VaultError.manifestFull }
        byName[name] = entries.count
        byID[id] = entries.count
        entries.append(e)
        plaintextSize += e.encodedLength
    }

    /// Removes the named entries (all of them exist, or nothing changes).
    public mutating func remove(named names: [String]) throws -> [ManifestEntry] {
        var doomed = Set<Int>()
        for name in names {
            guard let i = byName[ByteKey(name)] else { throw VaultError.noSuchItem(name: name) }
            doomed.insert(i)
        }
        let removed = doomed.sorted().map { entries[$0] }
        entries = entries.enumerated().filter { !doomed.contains($0.offset) }.map(\.element)
        plaintextSize -= removed.reduce(0) { $0 + $1.encodedLength }
        reindex()
        return removed
    }

    public mutating func rename(_ name: String, to newName: String) throws {
        try ManifestEntry.checkName(newName)
        let old = ByteKey(name), new = ByteKey(newName)
        guard let i = byName[old] else { throw VaultError.noSuchItem(name: name) }
        guard byName[new] == nil else { throw VaultError.alreadyExists(path: newName) }
        guard plaintextSize - old.bytes.count + new.bytes.count <= plaintextCapacity else { throw VaultError.manifestFull }
        entries[i].name = newName
        plaintextSize += new.bytes.count - old.bytes.count
        byName[old] = nil
        byName[new] = i
    }

    /// Replaces the entry of the same name (its item id may change).
    public mutating func replace(_ e: ManifestEntry) {
        guard let i = byName[ByteKey(e.name)] else { return }
        byID[ByteKey(entries[i].itemID)] = nil
        byID[ByteKey(e.itemID)] = i
        entries[i] = e
    }

    private mutating func reindex() {
        byName = Dictionary(uniqueKeysWithValues: entries.enumerated().map { (ByteKey($1.name), $0) })
        byID = Dictionary(uniqueKeysWithValues: entries.enumerated().map { (ByteKey($1.itemID), $0) })
    }

    /// The sealed file bytes.
    func sealed(key: SecretBytes, vaultID: [UInt8], nonce: [UInt8] = SecureRandom.bytes(12)) throws -> [UInt8] {
        // Reserve the exact size up front so the array never reallocates
        // (which would leave copies of file keys in freed memory), then zero it.
        guard plaintextSize <= plaintextCapacity else { throw VaultError.manifestFull }
        var plain = [UInt8]()
        plain.reserveCapacity(plaintextSize)
        plain += withUnsafeBytes(of: UInt32(entries.count).bigEndian, Array.init)
        for e in entries { e.encode(into: &plain) }
        defer { SecureZero.zero(&plain) }
        let prefix = Self.magic + [Self.version, 0, 0, 0] + withUnsafeBytes(of: generation.bigEndian, Array.init) + nonce
        let sealed = try AEAD(.aes256GCM, key: key).seal(nonce: nonce, aad: vaultID + prefix, plaintext: plain)
        return prefix + sealed
    }

    /// Opens and parses a sealed manifest: exact shape, every entry valid,
    /// unique names and ids, no trailing bytes.
    static func open(_ file: [UInt8], key: SecretBytes, vaultID: [UInt8], capacity: Int = maxFileSize) throws -> Manifest {
        guard file.count >= 9, Array(file[0..<8]) == magic, file[8] == version || file[8] == 1 else {
            throw VaultError.corruptedOrTampered
        }
        let prefix = file[8] == 1 ? version1PrefixLength : prefixLength
        guard file.count >= prefix + AEADAlgorithm.tagLength + 4, file.count <= capacity,
              file[9..<12].allSatisfy({ $0 == 0 }) else {
            throw VaultError.corruptedOrTampered
        }
        let generation = file[8] == 1 ? 0 : file[12..<20].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let plain: SecretBytes
        do {
            plain = try AEAD(.aes256GCM, key: key).openSecret(nonce: Array(file[(prefix - 12)..<prefix]),
                                                             aad: vaultID + Array(file[0..<prefix]),
                                                             sealed: Array(file[prefix...]))
        } catch CryptoError.authenticationFailed { throw VaultError.corruptedOrTampered }
        var manifest = try plain.withUnsafeBytes { try parse(plaintext: $0, capacity: capacity) }
        manifest.generation = generation
        return manifest
    }

    /// Parses a decrypted manifest: exact shape, unique names and ids.
    static func parse(plaintext b: UnsafeRawBufferPointer, capacity: Int = maxFileSize) throws -> Manifest {
        guard b.count >= 4 else { throw VaultError.corruptedOrTampered }
        let count = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        guard count <= maxEntries else { throw VaultError.corruptedOrTampered }
        var offset = 4
        var m = try Manifest(entries: [], capacity: capacity)
        m.entries.reserveCapacity(count)
        for _ in 0..<count {
            do { try m.add(try ManifestEntry.decode(b, offset: &offset)) } catch { throw VaultError.corruptedOrTampered }
        }
        guard offset == b.count else { throw VaultError.corruptedOrTampered }
        return m
    }
}

/// A name or item id as bytes, for the manifest's indexes. Hashed in one
/// call: an [UInt8] key is hashed byte by byte, which was most of the time
/// spent opening a 130,000-item manifest.
struct ByteKey: Hashable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    init(_ name: String) { bytes = Array(name.utf8) }
    func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
}

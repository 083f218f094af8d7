import ByteLayout
import System
import VaultCrypto

// Manifest, file `manifest` (docs/FORMAT.md, "Manifest"):
//
//   magic "VAULTMAN" (8) || version 0x07 || 3 zero bytes || generation u64be
//   || nonce (12) || AES-256-GCM(manifest key, nonce, aad = vault id (16) || bytes 0..<32, plaintext)
//   plaintext = u32be record count || records || history || tombstones || marks || forgotten
//   record    = u32be version number || dropper (Dropper.swift) || entry (ManifestEntry.swift)
//   history (ManifestHistory.swift), tombstones (Tombstones.swift), marks (PruneMarks.swift),
//   forgotten (ForgottenHostNames.swift)
//
// Version 7 adds the record names of `backup --to` hosts whose snapshots
// were forgotten: the machine that publishes host records next need not be
// the one that forgot (the parties model's seed 14769867183226418196, on
// two machines). Version 6 (read; written only for the published vector)
// has no such list.
// Version 6 gives each tombstone the digest of the item it let go (a
// forgery under a learned id, let go on one machine, must not take the
// real item with it on another). Version 5 (read; written only for the
// published vector) has tombstones of ids alone.
// Version 5 adds the trailer: the manifest's ancestry, the ids it let go,
// and prune's marks (issue 37: sync decides from proven history). Version
// 4 (read; written only for the published vector) has no trailer: its
// history is unknown. Version 4 adds who dropped a version in, when another user of the
// machine did (a shared inbox). Version 3 (read; written only for the
// published vector) has records without the dropper. Version 3 keeps an item's history: several entries may share a name, each
// with its own version number (1, 2, …; gaps where versions were forgotten);
// the highest is the item's current content. Version 2 (read; written only
// for the published vector) is the same prefix with plaintext = u32be count
// || entries, every name once, each counting as version 1.
// Version 1 (read, never written) has no generation: bytes 0..<24 are magic,
// version, zeros and nonce, and they are the aad. The generation counts the
// manifest's writes and is authenticated with it, so an older manifest put
// back in place is recognisable (RollbackGuard). The nonce is random per
// write; a manifest key sees one nonce per manifest write, far below the
// 2^32 random-nonce limit for AES-GCM.

public struct Manifest: Sendable {
    public static let magic = Array("VAULTMAN".utf8)
    public static let version: UInt8 = 7
    static let prefixLength = 32
    static let version1PrefixLength = 24
    /// Bounds on what a manifest may hold, checked while parsing, and by
    /// every change before it is saved: the writer never saves a manifest
    /// the reader would refuse.
    public static let maxEntries = 1_000_000
    public static let maxFileSize = 256 << 20
    /// At most this many versions of one name: `forget` trims history; an
    /// addition past it is refused (a drop-in waits in the inbox).
    public static let maxVersions = 10_000
    /// The record's version-number prefix in a version 3 or 4 plaintext.
    static let versionFieldLength = 4
    /// A version 4 record's fixed part before its entry: the version
    /// number and the dropper's first byte.
    static let recordPrefixLength = versionFieldLength + 1
    /// What a file or folder under a reserved name in a manifest before
    /// version 5 is called from then on.
    static let renamedReservedSuffix = " (file)"
    /// A version 7 trailer with no history, tombstones, marks or forgotten hosts.
    static let emptyTrailerLength = 2 + 4 + 4 + 4
    /// What an empty forgotten-hosts list adds to a version 5 or 6 trailer.
    static let emptyForgottenLength = 4

    public private(set) var entries: [ManifestEntry]
    /// Indexes into `entries`, so lookups and the uniqueness checks of a
    /// 100,000-item manifest stay linear overall, not quadratic. Names are
    /// keyed by their UTF-8 bytes: FORMAT.md compares names byte for byte,
    /// where Swift's String equality would merge canonically equivalent ones.
    /// Per name, the indexes of its versions in ascending version order.
    private var byName: [ByteKey: [Int]] = [:]
    private var byID: [ByteKey: Int] = [:]
    /// 4 + the sum of the records' lengths (as version 4 and 5 records).
    private var recordsSize = 4
    /// The version 7 plaintext's size: the records and the trailer.
    public var plaintextSize: Int {
        recordsSize + history.encodedLength + tombstones.encodedLength + pruneMarks.encodedLength + forgottenHosts.encodedLength
    }
    /// The writes this manifest descends from (ManifestHistory.swift).
    public package(set) var history = ManifestHistory()
    /// Whether `history` was read from the manifest (version 5) or is
    /// unknown (an older version: nothing can be proven about its ancestry).
    public package(set) var historyKnown = true
    /// The ids this vault let go (Tombstones.swift).
    public package(set) var tombstones = Tombstones()
    /// Prune's marks (PruneMarks.swift).
    public var pruneMarks = PruneMarks()
    /// The record names of hosts whose snapshots were forgotten (ForgottenHostNames.swift).
    public var forgottenHosts = ForgottenHostNames()
    /// How many times this vault's manifest has been written (0 for a
    /// version 1 manifest, which did not count). `sealed` writes it as is;
    /// `UnlockedVault.saveManifest` raises it first.
    public var generation: UInt64 = 0
    /// The file size this manifest may seal to: `maxFileSize`, smaller only
    /// in tests (which fill it to the brim without 256 MiB of names).
    let capacity: Int
    package var plaintextCapacity: Int { capacity - Self.prefixLength - AEADAlgorithm.tagLength }
    /// Room beyond the capacity while a version 2 or 3 manifest is parsed:
    /// its entries cost 5 or 1 bytes more each as version 4 records, so one
    /// filled to the brim still opens (and then takes no growth until it shrinks).
    private var parseSlack = 0

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

    /// Before each write of this manifest by the copy whose replica id is
    /// `replica` (Replica.swift): one more generation, and one more write
    /// of that replica in the history. A merged manifest, whose generation
    /// the merge chose, takes only the write (`countGeneration` false).
    package mutating func recordWrite(by replica: [UInt8], countGeneration: Bool = true) throws {
        try history.advance(replica: replica)
        historyKnown = true
        guard plaintextSize <= plaintextCapacity else { throw VaultError.manifestFull }
        if countGeneration { generation += 1 }
    }

    /// The current (highest) version of `name`.
    public func entry(named name: String) -> ManifestEntry? { byName[ByteKey(name)]?.last.map { entries[$0] } }
    /// Version `version` of `name`, if the manifest holds it.
    public func entry(named name: String, version: UInt32) -> ManifestEntry? {
        byName[ByteKey(name)]?.lazy.map { entries[$0] }.first { $0.version == version }
    }
    /// Every version of `name`, oldest (lowest number) first; empty if none.
    public func versions(named name: String) -> [ManifestEntry] { (byName[ByteKey(name)] ?? []).map { entries[$0] } }
    public func entry(itemID: [UInt8]) -> ManifestEntry? { byID[ByteKey(itemID)].map { entries[$0] } }
    public func contains(name: String) -> Bool { byName[ByteKey(name)] != nil }
    /// How many items (names) there are; `entries.count` counts their versions.
    public var itemCount: Int { byName.count }
    /// Each item once: its current version and how many versions it has.
    /// Not a backup's packs and snapshots (BackupItems.swift): the commands
    /// that list, match, forget or mount items never see them.
    public var items: [(current: ManifestEntry, versions: Int)] {
        byName.values.compactMap {
            let current = entries[$0[$0.count - 1]]
            return current.kind.isBackupStorage ? nil : (current, $0.count)
        }
    }

    /// Whether `extra` more entries with names (and droppers' names) of
    /// `nameBytes` bytes in all still fit.
    func hasRoom(entries extra: Int = 1, nameBytes: Int) -> Bool {
        // A tombstone per item id the manifest holds may come (its removal
        // frees more than the tombstone takes) and a history of up to that
        // many replicas: checked when they are added, not here.
        entries.count + extra <= Self.maxEntries
            && plaintextSize + extra * (Self.recordPrefixLength + ManifestEntry.fixedLength) + nameBytes <= plaintextCapacity + parseSlack
    }

    /// Whether the record of `e` still fits.
    func hasRoom(for e: ManifestEntry) -> Bool {
        hasRoom(nameBytes: Self.recordLength(e) - Self.recordPrefixLength - ManifestEntry.fixedLength)
    }

    /// The length of `e`'s version 4 record.
    static func recordLength(_ e: ManifestEntry) -> Int {
        versionFieldLength + Dropper.encodedLength(e.droppedBy) + e.encodedLength
    }

    /// Adds an entry as it is: its (name, version) and item id must be new
    /// (never held before: not a tombstone), and the name must have fewer
    /// than `maxVersions` versions.
    public mutating func add(_ e: ManifestEntry) throws {
        let name = ByteKey(e.name), id = ByteKey(e.itemID)
        let existing = byName[name]
        // Versions mostly arrive in ascending order (a manifest as written,
        // a new version): then only the last needs comparing.
        let newest = existing?.last.map { entries[$0].version } ?? 0
        let inOrder = e.version > newest
        guard e.version >= 1, inOrder || !existing!.contains(where: { entries[$0].version == e.version }) else {
            throw VaultError.alreadyExists(path: e.name)
        }
        guard (existing?.count ?? 0) < Self.maxVersions else { throw VaultError.tooManyVersions(name: e.name) }
        guard byID[id] == nil else { throw VaultError.misuse(.duplicateItemID) }
        guard !tombstones.contains(e.itemID) else { throw VaultError.itemIDRemoved(name: e.name) }
        guard BackupItems.nameFitsKind(e) else { throw VaultError.invalidName(e.name) }
        guard hasRoom(for: e) else { throw VaultError.manifestFull }
        let i = entries.count
        if inOrder {
            byName[name, default: []].append(i)
        } else {
            let at = existing!.firstIndex { entries[$0].version > e.version } ?? existing!.count
            byName[name]!.insert(i, at: at)
        }
        byID[id] = i
        entries.append(e)
        recordsSize += Self.recordLength(e)
    }

    /// Adds `e` as the newest version of its name (version 1 of a new name).
    /// Returns the entry with its version number.
    @discardableResult
    public mutating func addVersion(_ e: ManifestEntry) throws -> ManifestEntry {
        var e = e
        let newest = entry(named: e.name)?.version ?? 0
        guard newest < UInt32.max else { throw VaultError.tooManyVersions(name: e.name) }
        e.version = newest + 1
        try add(e)
        return e
    }

    /// Whether `name` can take one more version (count and number space).
    func canAddVersion(of name: String) -> Bool {
        guard let indexes = byName[ByteKey(name)] else { return true }
        return indexes.count < Self.maxVersions && entries[indexes[indexes.count - 1]].version < UInt32.max
    }

    /// Removes every version of the named items (all of them exist, or
    /// nothing changes); their ids become tombstones removed at `now`.
    public mutating func remove(named names: [String], now: Int64 = Syscall.now()) throws -> [ManifestEntry] {
        var doomed = Set<Int>()
        for name in names {
            guard let indexes = byName[ByteKey(name)] else { throw VaultError.noSuchItem(name: name) }
            doomed.formUnion(indexes)
        }
        return removeIndexes(doomed, now: now)
    }

    /// Removes the entries with these item ids (unknown ids are ignored);
    /// their ids become tombstones removed at `now`.
    public mutating func remove(itemIDs ids: [[UInt8]], now: Int64 = Syscall.now()) -> [ManifestEntry] {
        removeIndexes(Set(ids.compactMap { byID[ByteKey($0)] }), now: now)
    }

    private mutating func removeIndexes(_ doomed: Set<Int>, now: Int64) -> [ManifestEntry] {
        let removed = doomed.sorted().map { entries[$0] }
        entries = entries.enumerated().filter { !doomed.contains($0.offset) }.map(\.element)
        recordsSize -= removed.reduce(0) { $0 + Self.recordLength($1) }
        for e in removed { tombstones.insert(e, at: now) }
        reindex()
        return removed
    }

    /// Renames an item with its whole history.
    public mutating func rename(_ name: String, to newName: String) throws {
        try ManifestEntry.checkName(newName)
        guard !BackupItems.isReservedName(newName) else { throw VaultError.invalidName(newName) }
        let old = ByteKey(name), new = ByteKey(newName)
        guard let indexes = byName[old] else { throw VaultError.noSuchItem(name: name) }
        guard byName[new] == nil else { throw VaultError.alreadyExists(path: newName) }
        let growth = indexes.count * (new.bytes.count - old.bytes.count)
        guard plaintextSize + growth <= plaintextCapacity else { throw VaultError.manifestFull }
        for i in indexes { entries[i].name = newName }
        recordsSize += growth
        byName[old] = nil
        byName[new] = indexes
    }

    /// Gives the entry at `index` a new item id and file key (what a rekey
    /// does to every entry). Names, versions and sizes stay, so the names'
    /// index is untouched: a copy of this manifest made before shares it.
    /// The old id becomes a tombstone: the storage saw it as a blob name,
    /// and a drop-in under it must not be taken in after the rekey.
    mutating func replaceKey(at index: Int, itemID: [UInt8], fileKey: FileKey, now: Int64 = Syscall.now()) throws {
        let id = ByteKey(itemID)
        guard byID[id] == nil, !tombstones.contains(itemID) else { throw VaultError.misuse(.duplicateItemID) }
        tombstones.insert(entries[index], at: now)
        byID[ByteKey(entries[index].itemID)] = nil
        byID[id] = index
        entries[index].itemID = itemID
        entries[index].fileKey = fileKey
    }

    /// Puts `e` where the entry with item id `old` is, without a tombstone
    /// for `old`: a merge's private copy of our manifest, when the remote
    /// holds another item under that id (RemoteMerge). Throws, changing
    /// nothing, if `e`'s id, or its name and version, is another entry's.
    package mutating func substitute(itemID old: [UInt8], with e: ManifestEntry) throws {
        guard let i = byID[ByteKey(old)] else { throw VaultError.misuse(.duplicateItemID) }
        if let j = byID[ByteKey(e.itemID)], j != i { throw VaultError.misuse(.duplicateItemID) }
        if let same = byName[ByteKey(e.name)], same.contains(where: { $0 != i && entries[$0].version == e.version }) {
            throw VaultError.alreadyExists(path: e.name)
        }
        recordsSize += Self.recordLength(e) - Self.recordLength(entries[i])
        entries[i] = e
        reindex()
    }

    private mutating func reindex() {
        byName = [:]
        for (i, e) in entries.enumerated() { byName[ByteKey(e.name), default: []].append(i) }
        for (key, indexes) in byName where zip(indexes, indexes.dropFirst()).contains(where: { entries[$0].version > entries[$1].version }) {
            byName[key] = indexes.sorted { entries[$0].version < entries[$1].version }
        }
        byID = Dictionary(uniqueKeysWithValues: entries.enumerated().map { (ByteKey($1.itemID), $0) })
    }

    /// The sealed file bytes, in format version 7; `formatVersion` 6, 5, 4, 3
    /// or 2 only for the published vectors (6: no forgotten hosts; 5: tombstones without digests;
    /// 4: no trailer; 3: no droppers either; 2: every name once, each
    /// version 1).
    package func sealed(key: SecretBytes, vaultID: [UInt8], nonce: [UInt8] = SecureRandom.bytes(12),
                formatVersion: UInt8 = Self.version) throws -> [UInt8] {
        var out = [UInt8]()
        try seal(appendingTo: &out, key: key, vaultID: vaultID, nonce: nonce, formatVersion: formatVersion)
        return out
    }

    /// The size `sealed` returns (format version 7).
    var sealedSize: Int { Self.prefixLength + plaintextSize + AEADAlgorithm.tagLength }

    /// `sealed`, appended to `out` and sealed in place there: no second
    /// copy of a manifest that may be tens of MiB.
    func seal(appendingTo out: inout [UInt8], key: SecretBytes, vaultID: [UInt8], nonce: [UInt8] = SecureRandom.bytes(12),
              formatVersion: UInt8 = Self.version) throws {
        // Reserve the exact size up front so the array never reallocates
        // (which would leave copies of file keys in freed memory), then zero it.
        guard plaintextSize <= plaintextCapacity else { throw VaultError.manifestFull }
        let trailer = formatVersion >= 5, droppers = formatVersion >= 4, records = formatVersion >= 3
        guard formatVersion >= 7 || forgottenHosts.count == 0 else { throw VaultError.misuse(.manifestVersion(formatVersion)) }
        guard droppers || (formatVersion == 3 && entries.allSatisfy({ $0.droppedBy == nil }))
                || (formatVersion == 2 && entries.allSatisfy({ $0.version == 1 && $0.droppedBy == nil })) else {
            throw VaultError.misuse(.manifestVersion(formatVersion))
        }
        var plain = [UInt8]()
        // Smaller for the older formats' vectors: their records are shorter.
        plain.reserveCapacity(plaintextSize)
        plain += ByteWriter.bigEndian(UInt32(entries.count))
        for e in entries {
            if records { plain += ByteWriter.bigEndian(e.version) }
            if droppers { Dropper.encode(e.droppedBy, into: &plain) }
            e.encode(into: &plain)
        }
        if trailer {
            history.encode(into: &plain)
            tombstones.encode(into: &plain, version: formatVersion)
            pruneMarks.encode(into: &plain)
            if formatVersion >= 7 { forgottenHosts.encode(into: &plain) }
        }
        defer { SecureZero.zero(&plain) }
        var w = ByteWriter(Self.magic + [formatVersion, 0, 0, 0])
        w.u64(generation)
        w.bytes(nonce)
        let prefix = w.bytes
        out.reserveCapacity(out.count + prefix.count + plain.count + AEADAlgorithm.tagLength)
        out += prefix
        let start = out.count
        out += repeatElement(0, count: plain.count + AEADAlgorithm.tagLength)
        let aead = try AEAD(.aes256GCM, key: key)
        try nonce.withUnsafeBytes { n in try (vaultID + prefix).withUnsafeBytes { a in try plain.withUnsafeBytes { p in
            try out.withUnsafeMutableBytes { o in
                try aead.seal(nonce: n, aad: a, plaintext: p, into: UnsafeMutableRawBufferPointer(rebasing: o[start...]))
            }
        } } }
    }

    /// Opens and parses a sealed manifest: exact shape, every entry valid,
    /// unique names and ids, no trailing bytes.
    package static func open(_ file: [UInt8], key: SecretBytes, vaultID: [UInt8], capacity: Int = maxFileSize) throws -> Manifest {
        var r = ByteReader(file)
        let formatVersion: UInt8, generation: UInt64, nonce: [UInt8]
        do {
            try r.expect(magic)
            formatVersion = try r.u8()
            guard (1...version).contains(formatVersion) else { throw VaultError.corruptedOrTampered }
            let prefix = formatVersion == 1 ? version1PrefixLength : prefixLength
            guard file.count >= prefix + AEADAlgorithm.tagLength + 4, file.count <= capacity else {
                throw VaultError.corruptedOrTampered
            }
            try r.expect([0, 0, 0])
            generation = formatVersion == 1 ? 0 : try r.u64()
            nonce = try r.bytes(12)
        } catch is ByteLayoutError { throw VaultError.corruptedOrTampered }
        let plain: SecretBytes
        do {
            plain = try AEAD(.aes256GCM, key: key).openSecret(nonce: nonce, aad: vaultID + Array(file[..<r.offset]),
                                                             sealed: r.rest())
        } catch CryptoError.authenticationFailed { throw VaultError.corruptedOrTampered }
        var manifest = try plain.withUnsafeBytes { try parse(plaintext: $0, capacity: capacity, formatVersion: formatVersion) }
        manifest.generation = generation
        return manifest
    }

    /// Parses a decrypted manifest: exact shape, unique (name, version)
    /// pairs and ids, at most `maxVersions` per name. Version 7: as 4, then
    /// the trailer (history, tombstones none of which is a record's id,
    /// marks, forgotten hosts); 6: the same without forgotten hosts; 5:
    /// without them and with tombstones of ids alone; 4: a version
    /// number and a dropper before each entry; 3: a
    /// version number only; 1 and 2: every entry is version 1.
    static func parse(plaintext b: UnsafeRawBufferPointer, capacity: Int = maxFileSize,
                      formatVersion: UInt8 = version) throws -> Manifest {
        let records = formatVersion >= 3, droppers = formatVersion >= 4, trailer = formatVersion >= 5
        var r = RawByteReader(b)
        let count: Int
        do { count = try r.length(UInt32.self, max: maxEntries) } catch { throw VaultError.corruptedOrTampered }
        var m = try Manifest(entries: [], capacity: capacity)
        m.entries.reserveCapacity(count)
        // An older version read in grows when written as version 7: its
        // records by 5 or 1 bytes each, and by an empty trailer; a version
        // 5 or 6 one by an empty forgotten-hosts list, a version 5 one by a
        // digest per tombstone too (below).
        m.parseSlack = (droppers ? 0 : records ? 1 : recordPrefixLength) * count
            + (formatVersion >= 7 ? 0 : trailer ? emptyForgottenLength : emptyTrailerLength)
        for _ in 0..<count {
            do {
                let version = records ? try r.u32() : 1
                let dropper = droppers ? try Dropper.decode(&r) : nil
                var e = try ManifestEntry.decode(&r)
                e.version = version
                e.droppedBy = dropper
                // Before version 5 a file could carry a name now reserved for
                // backup storage ("pack-" and 32 hex digits): it keeps
                // opening, under that name with " (file)" after it.
                if !trailer, !e.kind.isBackupStorage, BackupItems.isReservedName(e.name) { e.name += Self.renamedReservedSuffix }
                try m.add(e)
            } catch { throw VaultError.corruptedOrTampered }
        }
        if trailer {
            m.history = try ManifestHistory.decode(&r)
            m.tombstones = try Tombstones.decode(&r, version: formatVersion)
            if formatVersion == 5 { m.parseSlack += Tombstones.digestLength * m.tombstones.count }
            m.pruneMarks = try PruneMarks.decode(&r, max: maxEntries)
            if formatVersion >= 7 { m.forgottenHosts = try ForgottenHostNames.decode(&r) }
            // An id is held or let go, never both.
            guard m.tombstones.count == 0 || !m.entries.contains(where: { m.tombstones.contains($0.itemID) }) else {
                throw VaultError.corruptedOrTampered
            }
            guard m.plaintextSize <= m.plaintextCapacity + m.parseSlack else { throw VaultError.corruptedOrTampered }
        } else {
            m.historyKnown = false
        }
        guard r.isAtEnd else { throw VaultError.corruptedOrTampered }
        m.parseSlack = 0
        return m
    }
}

/// A name or item id as bytes, for the manifest's indexes. Hashed in one
/// call: an [UInt8] key is hashed byte by byte, which was most of the time
/// spent opening a 130,000-item manifest.
package struct ByteKey: Hashable {
    package let bytes: [UInt8]
    package init(_ bytes: [UInt8]) { self.bytes = bytes }
    package init(_ name: String) { bytes = Array(name.utf8) }
    package func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
}

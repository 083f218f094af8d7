import ByteLayout
import VaultCore
import VaultCrypto

// A repack note (docs/FORMAT.md, "Repack notes"): what the owner tells one
// host's backups about the packs prune rewrote, so they keep naming the
// pieces a repack kept instead of storing them again (issue 45: a day's
// backup after a prune stored 7.5 times a normal day). A backup without
// the password cannot read a repack's table; the owner seals it to the
// host's piece key. One per piece key, at `notes/<name hex>`:
//
//   "VAULTRN1" (8) || nonce (12) || AES-256-GCM(key, nonce, aad, plaintext)
//   aad       = "VAULTRN1" || vault id (16) || name (16)
//   plaintext = generation u64be || count u32be || entry × count
//   entry     = pack id (16) || repack blob (16) || range count u32be
//               || (old offset u64be || length u64be) × range count
//   key  = HKDF-SHA256(ikm = piece key, salt = vault id, info = "vault repack note key", 32)
//   name = HKDF-SHA256(ikm = piece key, salt = vault id, info = "vault repack note name", 16)
//
// A note only ever lets a backup keep naming a piece: absorb still walks
// a snapshot that names a repacked pack and takes it in only if every
// reference into it is one the repack kept (RepackedSnapshots).

public struct RepackNote: Sendable, Equatable {
    static let magic = Array("VAULTRN1".utf8)
    /// A note is at most this long: a backup reads no more.
    public static let maxLength = 64 << 20
    /// A sealed note's length with no entry (magic, nonce, generation,
    /// count, tag), and what an entry of `ranges` ranges adds: the owner's
    /// cap (RepackNotes) and `open`'s shape checks count the same bytes.
    static let emptyLength = magic.count + AEADAlgorithm.nonceLength + 12 + AEADAlgorithm.tagLength
    static func entryLength(ranges: Int) -> Int { 16 + 16 + 4 + 16 * ranges }

    public struct Entry: Sendable, Equatable {
        /// The pack id the references name.
        public var pack: [UInt8]
        /// The repack's blob in items/ (its item id): a backup keeps the
        /// pack's pieces only while that file is there.
        public var blob: [UInt8]
        /// What the repack kept, in the original pack's offsets.
        public var ranges: [(old: UInt64, length: UInt64)]

        public init(pack: [UInt8], blob: [UInt8], ranges: [(old: UInt64, length: UInt64)]) {
            (self.pack, self.blob, self.ranges) = (pack, blob, ranges)
        }

        public static func == (a: Entry, b: Entry) -> Bool {
            a.pack == b.pack && a.blob == b.blob && a.ranges.elementsEqual(b.ranges) { $0 == $1 }
        }

        /// The ranges as a table `place` can search (their new offsets are
        /// not known here, and not needed to say whether a piece was kept).
        public var table: RepackTable {
            var new: UInt64 = 0
            return RepackTable(pack: pack, ranges: ranges.map { r in
                defer { new &+= r.length }
                return RepackTable.Range(old: r.old, length: r.length, new: new)
            })
        }
    }

    /// The generation of the manifest the owner built it from.
    public var generation: UInt64
    /// In strictly ascending order of pack id.
    public var entries: [Entry]

    public init(generation: UInt64, entries: [Entry]) {
        self.generation = generation
        self.entries = entries.sorted { $0.pack.lexicographicallyPrecedes($1.pack) }
    }

    /// The entries `use` keeps, as tables by pack id (what BackupCache's
    /// `repacked` gives: ids are unique, in ascending order).
    public func tables(where use: (Entry) -> Bool = { _ in true }) -> [[UInt8]: RepackTable] {
        var out: [[UInt8]: RepackTable] = [:]
        for e in entries where use(e) { out[e.pack] = e.table }
        return out
    }

    /// The note's name under `notes/` for this piece key: 32 hex digits.
    public static func name(key: PieceKey, vaultID: [UInt8]) throws -> String {
        Hex.encode(try HostRecord.derive(key, vaultID, "vault repack note name", 16).withUnsafeBytes { Array($0) })
    }

    static func aad(_ vaultID: [UInt8], _ name: String) -> [UInt8] {
        magic + vaultID + (Hex.decode(name) ?? [])
    }

    static func aead(_ key: PieceKey, _ vaultID: [UInt8]) throws -> AEAD {
        try AEAD(.aes256GCM, key: try HostRecord.derive(key, vaultID, "vault repack note key", 32))
    }

    public func seal(key: PieceKey, vaultID: [UInt8]) throws -> [UInt8] {
        try seal(key: key, vaultID: vaultID, nonce: SecureRandom.bytes(AEADAlgorithm.nonceLength))
    }

    /// The same under `nonce` (the test vector's).
    func seal(key: PieceKey, vaultID: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        var w = ByteWriter()
        w.u64(generation)
        w.u32(UInt32(entries.count))
        for e in entries {
            w.bytes(e.pack)
            w.bytes(e.blob)
            w.u32(UInt32(e.ranges.count))
            for r in e.ranges {
                w.u64(r.old)
                w.u64(r.length)
            }
        }
        let sealed = try Self.aead(key, vaultID).seal(nonce: nonce, aad: Self.aad(vaultID, try Self.name(key: key, vaultID: vaultID)),
                                                     plaintext: w.bytes)
        return Self.magic + nonce + sealed
    }

    /// Opens a note read from `notes/<name>`: exact shape (pack ids
    /// strictly ascending; per entry 1 … 2^22 ranges, each at least a
    /// byte, in increasing order, neither overlapping nor touching, no sum
    /// past 2^64), nothing after. Anything else is `invalidCache`: a note,
    /// like the cache, is a hint, and one that does not check is ignored.
    public static func open(_ bytes: [UInt8], key: PieceKey, vaultID: [UInt8]) throws -> RepackNote {
        let head = magic.count + AEADAlgorithm.nonceLength
        guard bytes.count <= maxLength, bytes.count >= emptyLength,
              Array(bytes.prefix(magic.count)) == magic else { throw BackupError.invalidCache }
        var plain: [UInt8]
        do {
            plain = try aead(key, vaultID).open(nonce: Array(bytes[magic.count..<head]),
                                                aad: aad(vaultID, try name(key: key, vaultID: vaultID)), sealed: Array(bytes[head...]))
        } catch CryptoError.authenticationFailed {
            throw BackupError.invalidCache
        }
        defer { SecureZero.zero(&plain) }
        do {
            var r = ByteReader(plain)
            let generation = try r.u64()
            let count = Int(try r.u32())
            guard count <= r.remaining / entryLength(ranges: 0) else { throw BackupError.invalidCache }
            var entries: [Entry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let pack = try r.bytes(16), blob = try r.bytes(16)
                guard entries.last.map({ $0.pack.lexicographicallyPrecedes(pack) }) ?? true else { throw BackupError.invalidCache }
                let n = Int(try r.u32())
                guard n >= 1, n <= RepackTable.maxRanges, n <= r.remaining / 16 else { throw BackupError.invalidCache }
                var ranges: [(old: UInt64, length: UInt64)] = []
                ranges.reserveCapacity(n)
                var previousEnd: UInt64?
                for _ in 0..<n {
                    let old = try r.u64(), length = try r.u64()
                    let (end, overflow) = old.addingReportingOverflow(length)
                    guard length >= 1, !overflow, previousEnd.map({ $0 < old }) ?? true else { throw BackupError.invalidCache }
                    ranges.append((old, length))
                    previousEnd = end
                }
                entries.append(Entry(pack: pack, blob: blob, ranges: ranges))
            }
            try r.finish()
            return RepackNote(generation: generation, entries: entries)
        } catch is ByteLayoutError {
            throw BackupError.invalidCache
        }
    }
}

import ByteLayout
import VaultCore
import VaultCrypto

// A host record (docs/FORMAT.md, "Host records"): what the owner tells one
// `backup --to` host about the packs it may reuse, on a remote the host
// may read but not list. One per piece key, at `hosts/<name hex>`:
//
//   "VAULTHR1" (8) || nonce (12) || AES-256-GCM(key, nonce, aad, plaintext)
//   aad       = "VAULTHR1" || vault id (16) || name (16)
//   plaintext = generation u64be
//               || taken count u32be || snapshot id (16) × taken
//               || usable count u32be || pack id (16) × usable
//               || gone count u32be || id (16) × gone
//   key  = HKDF-SHA256(ikm = piece key, salt = vault id, info = "vault host record key", 32)
//   name = HKDF-SHA256(ikm = piece key, salt = vault id, info = "vault host record name", 16)
//
// The piece key is the host's own secret, which reaches the owner only
// sealed inside its snapshots: so a record opens for that host alone, and
// only the owner (or the host) can have made it. The storage, which can
// serve any bytes, can withhold a record or serve an older one; the
// generation (the manifest's) lets the host refuse one older than it saw.

public struct HostRecord: Sendable, Equatable {
    static let magic = Array("VAULTHR1".utf8)
    /// What the owner leaves at `hosts/<name>` once the vault holds no
    /// snapshot with that piece key (all were forgotten): it can no longer
    /// seal a record for it, and deleting the record would read, to a host
    /// that never read one, as "none published yet", which trusts every
    /// pack it sent (the model test's seed 17593854877841883336: a host's
    /// snapshot named a pack prune had deleted, and was refused). A host
    /// that reads this names no pack it sent. Anyone who may write
    /// `hosts/` could put it there; it costs the host a full upload, as
    /// withholding its record does.
    public static let retired = Array("VAULTHR0".utf8)
    /// A record is at most this long (some 4 million ids): a host reads no more.
    public static let maxLength = 64 << 20

    /// The generation of the manifest the owner built it from.
    public var generation: UInt64
    /// This host's snapshots the manifest holds (taken in).
    public var taken: Set<[UInt8]>
    /// Packs in the manifest that prune has not marked: safe to reuse.
    public var usable: Set<[UInt8]>
    /// Ids that left the manifest (tombstones) and packs prune marked as
    /// going: never to be reused.
    public var gone: Set<[UInt8]>

    public init(generation: UInt64, taken: Set<[UInt8]>, usable: Set<[UInt8]>, gone: Set<[UInt8]>) {
        (self.generation, self.taken, self.usable, self.gone) = (generation, taken, usable, gone)
    }

    /// The object's name under `hosts/` for this piece key: 32 hex digits.
    public static func name(key: PieceKey, vaultID: [UInt8]) throws -> String {
        Hex.encode(try derive(key, vaultID, "vault host record name", 16).withUnsafeBytes { Array($0) })
    }

    static func derive(_ key: PieceKey, _ vaultID: [UInt8], _ info: String, _ length: Int) throws -> SecretBytes {
        try HKDF.deriveKey(ikm: key.secret, salt: vaultID, info: Array(info.utf8), length: length)
    }

    static func aad(_ vaultID: [UInt8], _ name: String) -> [UInt8] {
        magic + vaultID + (Hex.decode(name) ?? [])
    }

    /// The sealed object, under a fresh random nonce.
    public func seal(key: PieceKey, vaultID: [UInt8]) throws -> [UInt8] {
        try seal(key: key, vaultID: vaultID, nonce: SecureRandom.bytes(AEADAlgorithm.nonceLength))
    }

    /// The same under `nonce` (the test vector's).
    func seal(key: PieceKey, vaultID: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        var w = ByteWriter(capacity: 20 + 16 * (taken.count + usable.count + gone.count))
        w.u64(generation)
        for set in [taken, usable, gone] {
            w.u32(UInt32(set.count))
            for id in set.sorted(by: { $0.lexicographicallyPrecedes($1) }) { w.bytes(id) }
        }
        let aead = try AEAD(.aes256GCM, key: try Self.derive(key, vaultID, "vault host record key", 32))
        let sealed = try aead.seal(nonce: nonce, aad: Self.aad(vaultID, try Self.name(key: key, vaultID: vaultID)), plaintext: w.bytes)
        return Self.magic + nonce + sealed
    }

    /// Opens a record fetched from `hosts/<name>`: exact shape, each list in
    /// strictly ascending order, nothing after. Anything else (another
    /// host's record, a swapped name, a flipped bit) is `hostRecordRefused`.
    public static func open(_ bytes: [UInt8], key: PieceKey, vaultID: [UInt8]) throws -> HostRecord {
        guard bytes.count <= maxLength, bytes.count >= magic.count + AEADAlgorithm.nonceLength + AEADAlgorithm.tagLength + 20,
              Array(bytes.prefix(magic.count)) == magic else { throw BackupError.hostRecordRefused }
        let nonce = Array(bytes[magic.count..<magic.count + AEADAlgorithm.nonceLength])
        let sealed = Array(bytes[(magic.count + AEADAlgorithm.nonceLength)...])
        let plain: [UInt8]
        do {
            let aead = try AEAD(.aes256GCM, key: try derive(key, vaultID, "vault host record key", 32))
            plain = try aead.open(nonce: nonce, aad: aad(vaultID, try name(key: key, vaultID: vaultID)), sealed: sealed)
        } catch CryptoError.authenticationFailed {
            throw BackupError.hostRecordRefused
        }
        do {
            var r = ByteReader(plain)
            let generation = try r.u64()
            func ids() throws -> Set<[UInt8]> {
                let count = Int(try r.u32())
                guard count <= r.remaining / 16 else { throw BackupError.hostRecordRefused }
                var out = Set<[UInt8]>(minimumCapacity: count)
                var last: [UInt8]?
                for _ in 0..<count {
                    let id = try r.bytes(16)
                    guard last.map({ $0.lexicographicallyPrecedes(id) }) ?? true else { throw BackupError.hostRecordRefused }
                    out.insert(id)
                    last = id
                }
                return out
            }
            let record = HostRecord(generation: generation, taken: try ids(), usable: try ids(), gone: try ids())
            try r.finish()
            return record
        } catch is ByteLayoutError {
            throw BackupError.hostRecordRefused
        }
    }
}

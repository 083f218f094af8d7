import ByteLayout
import VaultCrypto

// Drop-in envelope, file `inbox/<item id hex>.env` (docs/FORMAT.md, "Drop-in"):
//
//   magic "VAULTENV" (8) || version || suite || enc || ct
//   version 0x01, suite 0x01: DHKEM(X25519, HKDF-SHA256), enc 32 bytes,
//        info = "vault v1 drop-in" || vault id
//   version 0x02, suite 0x02: X-Wing (HPKE KEM 0x647A), enc 1120 bytes,
//        info = "vault v1 drop-in" || vault id || 0x647A
//   ct = HPKE base-mode seal (RFC 9180; HKDF-SHA256, AES-256-GCM) to the
//        vault public key, aad = the bytes before ct,
//        plaintext = one manifest entry (ManifestEntry.swift), origin = dropped in
//
// The KEM is named three times (version and suite bytes in the aad, its id in
// info, and in HPKE's own suite_id), so an envelope cannot be relabelled
// from one KEM to the other. A vault opens both kinds: both private keys
// derive from its master key, so envelopes sealed before an upgrade still
// open after it. It carries the content's file key and metadata. The content
// itself is a sealed item beside it, `inbox/<item id hex>.item`.
//
// A batch envelope, file `inbox/<batch id hex>.env`, seals the entries of
// up to 128 drop-ins of one `vault add` at once (one KEM operation, one
// file, one unlink at absorb, instead of one each):
//
//   version 0x03, suite 0x01: X25519, info = "vault v1 drop-in batch" || vault id
//   version 0x04, suite 0x02: X-Wing, info = "vault v1 drop-in batch" || vault id || 0x647A
//   plaintext = count (u16, 1...128) || count manifest entries, origin dropped
//        in, kind file or folder, item ids distinct
//
// Entry k's content is `inbox/<batch id hex>.<item id hex>.item`.

public enum DropInEnvelope {
    public static let magic = Array("VAULTENV".utf8)
    static let info = Array("vault v1 drop-in".utf8)
    static let x25519PrefixLength = 10 + 32
    static let xwingPrefixLength = 10 + XWing.ciphertextLength
    static let maxPayload = ManifestEntry.fixedLength + ManifestEntry.maxNameLength + 16
    public static let maxLength = xwingPrefixLength + maxPayload
    /// The shortest: an X25519 envelope of an entry with a one-byte name.
    public static let minLength = x25519PrefixLength + ManifestEntry.fixedLength + 1 + 16

    static let batchInfo = Array("vault v1 drop-in batch".utf8)
    /// Drop-ins one batch envelope holds at most (DropInBatch.groupSize).
    public static let maxBatch = 128
    static let maxBatchPayload = 2 + maxBatch * (ManifestEntry.fixedLength + ManifestEntry.maxNameLength) + 16
    public static let maxBatchLength = xwingPrefixLength + maxBatchPayload

    /// HPKE's info: the label (single or batch), the vault id and, for
    /// X-Wing, its KEM id.
    static func kemInfo(_ label: [UInt8], vaultID: [UInt8], xwing: Bool) -> [UInt8] {
        label + vaultID + (xwing ? ByteWriter.bigEndian(HPKE.XWingKEM.id) : [])
    }

    static func xwingInfo(vaultID: [UInt8]) -> [UInt8] { kemInfo(info, vaultID: vaultID, xwing: true) }

    /// Seals `entry` to the vault's public key. Needs no secret of the vault.
    public static func seal(_ entry: ManifestEntry, to publicKey: VaultPublicKey, vaultID: [UInt8]) throws -> [UInt8] {
        var payload = [UInt8]()
        payload.reserveCapacity(entry.encodedLength)
        entry.encode(into: &payload)
        defer { SecureZero.zero(&payload) }
        return try seal(payload: payload, to: publicKey, vaultID: vaultID)
    }

    /// Seals the entries of 1...128 drop-ins in one batch envelope.
    public static func seal(batch entries: [ManifestEntry], to publicKey: VaultPublicKey, vaultID: [UInt8]) throws -> [UInt8] {
        precondition((1...maxBatch).contains(entries.count), "a batch holds 1...128 drop-ins")
        var payload = ByteWriter.bigEndian(UInt16(entries.count))
        payload.reserveCapacity(2 + entries.reduce(0) { $0 + $1.encodedLength })
        for entry in entries { entry.encode(into: &payload) }
        defer { SecureZero.zero(&payload) }
        return try seal(payload: payload, to: publicKey, vaultID: vaultID, batch: true)
    }

    /// Seals any payload (tests and fuzzers seal hostile ones), as a single
    /// envelope or a batch one.
    static func seal(payload: [UInt8], to publicKey: VaultPublicKey, vaultID: [UInt8], batch: Bool = false) throws -> [UInt8] {
        let label = batch ? batchInfo : info
        switch publicKey {
        case .x25519(let key):
            let (enc, sender) = try HPKE.setupSender(recipient: key, info: kemInfo(label, vaultID: vaultID, xwing: false),
                                                     aead: .aes256GCM)
            let prefix = Self.prefix(version: batch ? 3 : 1, suite: 1, enc: enc)
            return prefix + (try sender.seal(payload, aad: prefix))
        case .xwing(let key):
            let (enc, sender) = try HPKE.setupSender(recipient: key, info: kemInfo(label, vaultID: vaultID, xwing: true),
                                                     aead: .aes256GCM)
            let prefix = Self.prefix(version: batch ? 4 : 2, suite: 2, enc: enc)
            return prefix + (try sender.seal(payload, aad: prefix))
        }
    }

    /// magic || version || suite || enc: the envelope's associated data.
    private static func prefix(version: UInt8, suite: UInt8, enc: [UInt8]) -> [UInt8] {
        var w = ByteWriter(magic)
        w.u8(version)
        w.u8(suite)
        w.bytes(enc)
        return w.bytes
    }

    /// Whether `file` is an X-Wing envelope (by its version byte; nothing checked).
    public static func isHybrid(_ file: [UInt8]) -> Bool { file.count > 9 && file[8] == 2 }

    /// Opens an envelope of either kind with the vault's keys. Exact shape,
    /// bounded size, authenticated, one entry and nothing after it.
    static func open(_ file: [UInt8], with keys: VaultKeys, vaultID: [UInt8]) throws -> ManifestEntry {
        try open(file, x25519: keys.privateKey, xwing: keys.xwing, vaultID: vaultID)
    }

    /// The sealed payload after a `prefixLength`-byte prefix (magic,
    /// version, suite, enc) that is its associated data, for either KEM.
    private static func openPayload<K: HPKEPrivateKey>(_ file: [UInt8], prefixLength n: Int, recipient: K,
                                                       info: [UInt8], maxPayload: Int = maxPayload) throws -> SecretBytes {
        guard file.count > n + 16, file.count <= n + maxPayload else { throw VaultError.corruptedOrTampered }
        do {
            var r = ByteReader(file)
            try r.skip(10)  // magic, version, suite: read by `open`
            let enc = try r.bytes(n - 10)
            let aad = Array(file[..<r.offset])
            let context = try HPKE.setupRecipient(encapsulatedKey: enc, recipient: recipient, info: info, aead: .aes256GCM)
            return try context.openSecret(r.rest(), aad: aad)
        } catch { throw VaultError.corruptedOrTampered }
    }

    /// Opens a single envelope (versions 1 and 2): one entry.
    public static func open(_ file: [UInt8], x25519: X25519PrivateKey, xwing: XWing.PrivateKey,
                            vaultID: [UInt8]) throws -> ManifestEntry {
        let opened = try openAny(file, x25519: x25519, xwing: xwing, vaultID: vaultID)
        guard !opened.batch, let entry = opened.entries.first else { throw VaultError.corruptedOrTampered }
        return entry
    }

    /// Opens a single or a batch envelope: its entries (one, or 1...128
    /// files and folders with distinct item ids), and which kind it was.
    static func openAny(_ file: [UInt8], with keys: VaultKeys, vaultID: [UInt8]) throws -> (batch: Bool, entries: [ManifestEntry]) {
        try openAny(file, x25519: keys.privateKey, xwing: keys.xwing, vaultID: vaultID)
    }

    public static func openAny(_ file: [UInt8], x25519: X25519PrivateKey, xwing: XWing.PrivateKey,
                               vaultID: [UInt8]) throws -> (batch: Bool, entries: [ManifestEntry]) {
        guard file.count > 10 else { throw VaultError.corruptedOrTampered }
        var r = ByteReader(file)
        let version: UInt8, suite: UInt8
        do {
            try r.expect(magic)
            (version, suite) = (try r.u8(), try r.u8())
        } catch { throw VaultError.corruptedOrTampered }
        let payload: SecretBytes
        switch (version, suite) {
        case (1, 1):
            payload = try openPayload(file, prefixLength: x25519PrefixLength, recipient: x25519, info: info + vaultID)
        case (2, 2):
            payload = try openPayload(file, prefixLength: xwingPrefixLength, recipient: xwing, info: xwingInfo(vaultID: vaultID))
        case (3, 1):
            payload = try openPayload(file, prefixLength: x25519PrefixLength, recipient: x25519,
                                      info: kemInfo(batchInfo, vaultID: vaultID, xwing: false), maxPayload: maxBatchPayload)
            return (true, try payload.withUnsafeBytes { try decodeBatch($0) })
        case (4, 2):
            payload = try openPayload(file, prefixLength: xwingPrefixLength, recipient: xwing,
                                      info: kemInfo(batchInfo, vaultID: vaultID, xwing: true), maxPayload: maxBatchPayload)
            return (true, try payload.withUnsafeBytes { try decodeBatch($0) })
        default:
            throw VaultError.corruptedOrTampered
        }
        return (false, [try payload.withUnsafeBytes { b in
            let e = try ManifestEntry.decode(exactly: b)
            guard e.origin == .droppedIn else { throw VaultError.corruptedOrTampered }
            return e
        }])
    }

    /// A batch's plaintext: count (1...128), then exactly that many entries,
    /// each dropped in, a file or a folder, no item id twice, nothing after.
    /// Whoever sealed it holds every file key, so it is checked as hostile.
    private static func decodeBatch(_ b: UnsafeRawBufferPointer) throws -> [ManifestEntry] {
        var r = RawByteReader(b)
        let count: Int
        do { count = Int(try r.u16()) } catch { throw VaultError.corruptedOrTampered }
        guard (1...maxBatch).contains(count) else { throw VaultError.corruptedOrTampered }
        var entries: [ManifestEntry] = []
        entries.reserveCapacity(count)
        var ids = Set<[UInt8]>()
        for _ in 0..<count {
            let e = try ManifestEntry.decode(&r)
            guard e.origin == .droppedIn, e.kind == .file || e.kind == .folder, ids.insert(e.itemID).inserted else {
                throw VaultError.corruptedOrTampered
            }
            entries.append(e)
        }
        guard r.isAtEnd else { throw VaultError.corruptedOrTampered }
        return entries
    }
}

import ByteLayout
import System
import VaultCrypto

// Rekey progress, file `rekey.progress` (docs/FORMAT.md, "Rekey"): what a
// thin vault's rekey has re-encrypted, sent and proven on the remote, so a
// run after a kill sends only the rest.
//
//   magic "VAULTRKP" (8) || version 0x01 || 3 zero bytes || nonce (12)
//   || AES-256-GCM(progress key, nonce, aad = vault id || the 12 bytes before the nonce, plaintext)
//   plaintext    = u32be n || n × (old item id (16) || new item id (16)
//                                  || new file key (32) || new blob's size u64be)
//   progress key = HKDF-SHA256(VMK, salt = vault id, info = "vault v1 rekey progress")
//
// Under the key the rekey leaves, so it holds the new file keys no wider
// than the old manifest held the old ones. A file that does not open (a
// finished rekey's, whose key is gone; damage) is no progress: the rerun
// re-encrypts everything, which costs time and loses nothing.

struct RekeyProgress {
    static let magic = Array("VAULTRKP".utf8)
    static let version: UInt8 = 1
    static let recordLength = 2 * ItemHeader.itemIDLength + FileKey.length + 8
    static let maxLength = 24 + 4 + Manifest.maxEntries * recordLength + AEADAlgorithm.tagLength

    struct Done {
        let newID: [UInt8]
        let key: FileKey
        let size: UInt64
    }

    /// By old item id.
    private(set) var done: [ByteKey: Done] = [:]

    var count: Int { done.count }

    subscript(oldID: [UInt8]) -> Done? { done[ByteKey(oldID)] }

    mutating func record(old: [UInt8], _ d: Done) { done[ByteKey(old)] = d }

    /// Keeps only what `present` (the remote's blobs: size) holds whole.
    mutating func keep(present: [String: UInt64]) {
        done = done.filter { present[Hex.encode($0.value.newID)] == $0.value.size }
    }

    /// The progress in `paths`, opened with `keys`; empty when there is
    /// none or it does not open (see above).
    static func read(_ paths: VaultPaths, keys: VaultKeys, vaultID: [UInt8]) throws -> RekeyProgress {
        let file: [UInt8]
        do { file = try VaultDirectory.readFile(paths.rekeyProgress, limit: maxLength) } catch let e as SystemError where e.errno == .noSuchFile {
            return RekeyProgress()
        } catch VaultError.corruptedOrTampered {
            return RekeyProgress()
        }
        return (try? open(file, keys: keys, vaultID: vaultID)) ?? RekeyProgress()   // does not open: no progress (see above)
    }

    static func open(_ file: [UInt8], keys: VaultKeys, vaultID: [UInt8]) throws -> RekeyProgress {
        guard file.count >= 24 + 4 + AEADAlgorithm.tagLength, Array(file[0..<8]) == magic, file[8] == version,
              file[9..<12].allSatisfy({ $0 == 0 }) else { throw VaultError.corruptedOrTampered }
        let key = try keys.master.rekeyProgressKey(vaultID: vaultID)
        let plain: SecretBytes
        do {
            plain = try AEAD(.aes256GCM, key: key).openSecret(nonce: file[12..<24], aad: vaultID + file[0..<12], sealed: file[24...])
        } catch CryptoError.authenticationFailed { throw VaultError.corruptedOrTampered }
        var progress = RekeyProgress()
        let n: Int = try plain.withUnsafeBytes { b in
            var r = RawByteReader(b)
            do {
                let n = try r.length(UInt32.self, max: Manifest.maxEntries)
                guard r.remaining == n * recordLength else { throw VaultError.corruptedOrTampered }
                return n
            } catch is ByteLayoutError { throw VaultError.corruptedOrTampered }
        }
        for i in 0..<n {
            let at = 4 + i * recordLength
            let (old, new, size) = plain.withUnsafeBytes { b in
                (Array(b[at..<(at + 16)]), Array(b[(at + 16)..<(at + 32)]),
                 b[(at + 64)..<(at + 72)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            }
            progress.record(old: old, Done(newID: new, key: try FileKey(secret: plain.slice((at + 32)..<(at + 64))), size: size))
        }
        return progress
    }

    /// Seals and writes the file atomically (under the vault's current key).
    func write(_ paths: VaultPaths, keys: VaultKeys, vaultID: [UInt8]) throws {
        try VaultDirectory.atomicWrite(try sealed(keys: keys, vaultID: vaultID), to: paths.rekeyProgress)
    }

    func sealed(keys: VaultKeys, vaultID: [UInt8], nonce: [UInt8] = SecureRandom.bytes(12)) throws -> [UInt8] {
        var plain = [UInt8]()
        plain.reserveCapacity(4 + done.count * Self.recordLength)
        defer { SecureZero.zero(&plain) }
        plain += ByteWriter.bigEndian(UInt32(done.count))
        // Any order: a reader looks records up by old id.
        for (old, d) in done {
            plain += old.bytes
            plain += d.newID
            d.key.withUnsafeBytes { plain.append(contentsOf: $0) }
            plain += ByteWriter.bigEndian(d.size)
        }
        let prefix = Self.magic + [Self.version, 0, 0, 0]
        let key = try keys.master.rekeyProgressKey(vaultID: vaultID)
        return prefix + nonce + (try AEAD(.aes256GCM, key: key).seal(nonce: nonce, aad: vaultID + prefix, plaintext: plain))
    }

    /// Removes the file (the rekey switched, or never needed one).
    static func remove(_ paths: VaultPaths) throws {
        do { try Syscall.unlink(paths.rekeyProgress) } catch let e as SystemError where e.errno == .noSuchFile { return }
        try Syscall.fsyncDirectory(paths.root)
    }
}

import ByteLayout
import VaultCore

/// The clear start of a manifest (docs/FORMAT.md, "Manifest"):
/// `"VAULTMAN" || version || 00 00 00 || generation u64be` for versions 2
/// to 7 (3 adds versions of items inside the sealed part, 4 who dropped
/// them in, 5 the history, tombstones and prune marks, 6 the digest of
/// each tombstone's item, 7 the forgotten hosts);
/// version 1 has no generation (it counts as 0). Read from a remote without
/// any key, so it is hostile: the exact magic, a known version, the zero
/// bytes. Nothing is trusted beyond deciding whether to refuse a push (a
/// forged number can make a push refuse, or overwrite a copy its writer can
/// delete anyway; a pull authenticates the generation before using it).
public enum ManifestPrefix {
    public static let length = 20
    /// The bytes that name one write of a manifest: magic, version,
    /// generation and the nonce drawn at random for that write (for
    /// version 1, whose nonce ends at 24, 8 bytes of its ciphertext too).
    public static let identityLength = 32

    /// A manifest file's identity (its first 32 bytes, hex), checked to
    /// start as a manifest does: two writes never share one (the nonce), so
    /// a push that finds the base's identity on the remote finds the base.
    public static func identity(of bytes: [UInt8]) throws -> String {
        _ = try generation(of: bytes)
        guard bytes.count >= identityLength else { throw RemoteError.malformedRemote(.manifestTooShort) }
        return Hex.encode(Array(bytes.prefix(identityLength)))
    }

    public static func generation(of bytes: [UInt8]) throws -> UInt64 {
        var r = ByteReader(bytes)
        let version: UInt8
        do {
            try r.expect(Manifest.magic)
            version = try r.u8()
            try r.expect([0, 0, 0])
        } catch {
            throw RemoteError.malformedRemote(.notAManifest)
        }
        switch version {
        case 1: return 0
        case 2...Manifest.version:
            do { return try r.u64() } catch { throw RemoteError.malformedRemote(.manifestTooShort) }
        default:
            throw RemoteError.malformedRemote(.manifestVersion(version))
        }
    }
}

import ByteLayout
import VaultCore

/// The clear start of a manifest (docs/FORMAT.md, "Manifest"):
/// `"VAULTMAN" || version || 00 00 00 || generation u64be` for versions 2
/// to 4 (3 adds versions of items inside the sealed part, 4 who dropped them in);
/// version 1 has no generation (it counts as 0). Read from a remote without
/// any key, so it is hostile: the exact magic, a known version, the zero
/// bytes. Nothing is trusted beyond deciding whether to refuse a push (a
/// forged number can make a push refuse, or overwrite a copy its writer can
/// delete anyway; a pull authenticates the generation before using it).
public enum ManifestPrefix {
    public static let length = 20

    public static func generation(of bytes: [UInt8]) throws -> UInt64 {
        var r = ByteReader(bytes)
        let version: UInt8
        do {
            try r.expect(Manifest.magic)
            version = try r.u8()
            try r.expect([0, 0, 0])
        } catch {
            throw RemoteError.malformedRemote("the remote's manifest does not start as a manifest does")
        }
        switch version {
        case 1: return 0
        case 2, 3, 4:
            do { return try r.u64() } catch { throw RemoteError.malformedRemote("the remote's manifest is too short") }
        default:
            throw RemoteError.malformedRemote("the remote's manifest has an unknown version \(version)")
        }
    }
}

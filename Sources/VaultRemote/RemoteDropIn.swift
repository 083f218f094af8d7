import System
import VaultCore
import VaultCrypto

/// `vault add --to TARGET`: a drop-in straight into a remote's inbox from a
/// machine with no vault and no password. Only the remote's header is
/// read (for the vault's public key); the content is sealed here, in a
/// private scratch vault that holds nothing but that header, then uploaded
/// content first and envelope last, so the owner's pull never sees an
/// envelope without its content. The storage credentials this needs: read
/// `vault.header`, write `inbox/`; no list, no delete (docs/SECURITY.md).
public final class RemoteDropIn {
    public let target: String
    public let header: VaultHeader
    /// A scratch vault (header, empty manifest file, items/, inbox/) that
    /// `Vault.dropIn` writes into; erased on deinit.
    public let scratch: Vault
    let scratchPath: String
    public let rclone: Rclone

    /// Fetches and parses the header, and checks its fingerprint against
    /// `expected` (the --fingerprint option) or the one `pins` remembers for
    /// this target. The first use, with neither, remembers it once
    /// `firstUse` (given the fingerprint; it throws to refuse) accepts it:
    /// ssh's way, asking on a terminal before trusting a new host key.
    public init(target: String, rclone: Rclone, expected: String?, pins: FingerprintPins, scratchBase: String,
                firstUse: (String) throws -> Void) throws {
        self.target = target
        self.rclone = rclone
        // Fetched alone, never by listing its folder: the host may have
        // no right to list (a create-only host, docs/SECURITY.md).
        let fetched = try rclone.fetch(RemoteNames.join(target, RemoteNames.header), limit: VaultHeader.maxLength + 1)
        guard let bytes = fetched, !bytes.isEmpty else { throw RemoteError.noRemoteVault(target: target) }
        guard bytes.count >= VaultHeader.minLength, bytes.count <= VaultHeader.maxLength else {
            throw RemoteError.malformedRemote(.headerImpossibleSize)
        }
        do { header = try VaultHeader(parsing: bytes) } catch VaultError.headerDamaged {
            // The remote's copy, not this machine's vault: say so (exit 14 either way).
            throw RemoteError.malformedRemote(.headerChecksum)
        }
        let found = header.fingerprint
        if let want = expected ?? pins.remembered(for: target) {
            guard FingerprintPins.normalize(want) == FingerprintPins.normalize(found) else {
                throw RemoteError.fingerprintMismatch(expected: want, found: found, given: expected != nil)
            }
        } else {
            try firstUse(found)
        }
        try Vault.ensureDirectory(scratchBase)
        ScratchNames.removeAbandoned(in: scratchBase, prefix: "dropin-")
        scratchPath = scratchBase + "/" + (try ScratchNames.make("dropin-"))
        try Syscall.mkdir(scratchPath)
        for sub in ["items", "inbox"] { try Syscall.mkdir(scratchPath + "/" + sub) }
        _ = try FileHandleFD(creating: scratchPath + "/manifest")
        try VaultDirectory.atomicWrite(bytes, to: scratchPath + "/vault.header")
        scratch = try Vault(at: scratchPath)
        try pins.remember(found, for: target)
    }

    deinit { _ = Eraser.erase(scratchPath) }

    /// Uploads one drop-in of the scratch vault (content, then envelope)
    /// and removes it there: `backup --to` sends each pack as it fills, so
    /// the scratch vault never holds more than one.
    public func upload(blob: String) throws {
        let inbox = RemoteNames.join(target, "inbox")
        try rclone.upload([blob + ".item"], from: scratchPath + "/inbox", to: inbox, createOnly: true)
        try rclone.upload([blob + ".env"], from: scratchPath + "/inbox", to: inbox, createOnly: true)
        for suffix in [".item", ".env"] { try Syscall.unlink(scratchPath + "/inbox/" + blob + suffix) }
    }

    /// Uploads what was dropped into the scratch vault: every content file,
    /// then every envelope. Returns how many drop-ins went up.
    public func upload() throws -> Int {
        let names = try VaultDirectory.names(in: scratchPath + "/inbox")
        let contents = names.filter { $0.hasSuffix(".item") && !$0.hasPrefix(".") }
        let envelopes = names.filter { $0.hasSuffix(".env") && !$0.hasPrefix(".") }
        let inbox = RemoteNames.join(target, "inbox")
        try rclone.upload(contents, from: scratchPath + "/inbox", to: inbox, createOnly: true)
        try rclone.upload(envelopes, from: scratchPath + "/inbox", to: inbox, createOnly: true)
        return envelopes.count
    }
}

/// The fingerprints `add --to` has seen, per target, in
/// `<state directory>/pins/<hex SHA-256 of the target>`: trust on first
/// use, then a changed header is refused.
public struct FingerprintPins: Sendable {
    let directory: String
    public init(stateDirectory: String) { directory = stateDirectory + "/pins" }

    /// Keyed by the target's canonical spelling (RemoteNames.canonicalTarget):
    /// `/x/./RC` must not be a "first use" that accepts a swapped header.
    func path(_ target: String) -> String {
        directory + "/" + Hex.encode((try? SHA256.hash(Array(RemoteNames.canonicalTarget(target).utf8))) ?? [])
    }

    public func remembered(for target: String) -> String? {
        guard let raw = try? VaultDirectory.readFile(path(target), limit: 128) else { return nil }
        let text = String(decoding: raw, as: UTF8.self).split(separator: "\n").first.map(String.init)
        return text.flatMap { Self.normalize($0).count == 32 ? $0 : nil }
    }

    public func remember(_ fingerprint: String, for target: String) throws {
        guard remembered(for: target) == nil else { return }
        try Vault.ensureDirectory(directory)
        try VaultDirectory.atomicWrite(Array((fingerprint + "\n").utf8), to: path(target))
    }

    /// Lower case, no dashes or spaces.
    public static func normalize(_ s: String) -> String {
        String(s.lowercased().filter { $0 != "-" && $0 != " " && $0 != ":" })
    }
}

import VaultBackup
import VaultCore

/// A remote listing sorted into what a vault copy holds, with the shape
/// checks a hostile remote must pass before anything is downloaded: a
/// header of exactly the header's size, a manifest within the manifest's
/// bounds, drop-in envelopes within theirs.
public struct RemoteLayout: Sendable {
    public let files: [String: UInt64]
    public var items: [String: UInt64] = [:]
    /// Drop-ins whose content and envelope are both there.
    public var dropIns: [String] = []
    /// Files in `inbox/` that are no part of such a drop-in (RemoteStrays).
    public var strays: [String: UInt64] = [:]
    /// The names in `hosts/` (RemoteHostRecords) but those retired (of
    /// `HostRecord.retired`'s size, which no sealed record has).
    public var hostRecords: Set<String> { hostNames(retired: false) }
    /// The names in `hosts/` that are retired.
    public var retiredHostRecords: Set<String> { hostNames(retired: true) }
    /// Both, as `RemoteHostRecords.publish` takes them.
    public var hostRecordNames: HostRecordNames { HostRecordNames(live: hostRecords, retired: retiredHostRecords) }

    private func hostNames(retired: Bool) -> Set<String> {
        Set(files.compactMap { path, size in
            path.hasPrefix(RemoteHostRecords.directory + "/") && (size == UInt64(HostRecord.retired.count)) == retired
                ? String(path.dropFirst(RemoteHostRecords.directory.count + 1)) : nil
        })
    }
    public var hasVault: Bool { files[RemoteNames.header] != nil && files[RemoteNames.manifest] != nil }

    /// Envelope size bounds (docs/FORMAT.md, "Drop-in envelope"): X25519
    /// and X-Wing envelopes both.
    static let envelopeSizes: ClosedRange<UInt64> = UInt64(DropInEnvelope.minLength)...UInt64(DropInEnvelope.maxLength)

    public init(_ files: [String: UInt64]) {
        self.files = files
        var contents = Set<String>()
        var envelopes = Set<String>()
        for (path, size) in files {
            switch RemoteNames.kind(of: path) {
            case .item(let id): items[id] = size
            case .dropInContent(let id): contents.insert(id)
            case .dropInEnvelope(let id) where Self.envelopeSizes.contains(size): envelopes.insert(id)
            default: break
            }
        }
        dropIns = contents.intersection(envelopes).sorted()
        let whole = Set(dropIns)
        for (path, size) in files where path.hasPrefix("inbox/") {
            switch RemoteNames.kind(of: path) {
            case .dropInContent(let id) where whole.contains(id), .dropInEnvelope(let id) where whole.contains(id): continue
            default: strays[path] = size
            }
        }
    }

    /// Refuses a remote without a vault, or whose header or manifest
    /// cannot be one.
    public func checkVault(target: String) throws {
        guard let header = files[RemoteNames.header], let manifest = files[RemoteNames.manifest] else {
            throw RemoteError.noRemoteVault(target: target)
        }
        guard header >= UInt64(VaultHeader.minLength), header <= UInt64(VaultHeader.maxLength), manifest >= 52, manifest <= UInt64(Manifest.maxFileSize) else {
            throw RemoteError.malformedRemote(.impossibleSize)
        }
    }
}

import System
import VaultCore

/// What a download brought.
public struct FetchSummary: Sendable {
    public var files = 0
    public var bytes: UInt64 = 0
    public var seconds = 0.0
    /// The remote manifest's generation (from its clear prefix; the
    /// unlock that follows authenticates it).
    public var generation: UInt64 = 0
    /// The blobs the remote listed (item id, hex → size): what a thin
    /// clone, which downloads none, checks its manifest against.
    public var remoteItems: [String: UInt64] = [:]
}

/// `vault clone` and `check --remote --read-data`: the whole remote copy
/// (header, manifest, every blob, every complete drop-in) into a staging
/// directory, fsync'ed. The caller then unlocks it, checks every byte and
/// only then commits it (or, for a check, lets it be erased). Without
/// `blobs` (a thin clone) no blob comes: header, manifest and drop-ins.
public enum RemoteClone {
    public static func download(target: String, rclone: Rclone, into staging: StagingDirectory, blobs: Bool = true,
                                progress: ((UInt64, UInt64) -> Void)? = nil) throws -> FetchSummary {
        let started = Syscall.monotonicSeconds()
        let layout = RemoteLayout(try rclone.list(target))
        try layout.checkVault(target: target)
        var paths = [RemoteNames.header, RemoteNames.manifest] + (blobs ? layout.items.keys.sorted().map { "items/" + $0 } : [])
        for id in layout.dropIns { paths += ["inbox/\(id).item", "inbox/\(id).env"] }
        try rclone.download(paths, from: target, into: staging.path, progress: progress)
        try staging.syncAll()
        var summary = FetchSummary()
        summary.files = paths.count
        summary.bytes = paths.reduce(UInt64(0)) { $0 &+ (layout.files[$1] ?? 0) }
        // What arrived must be what was listed: a file that changed or went
        // missing meanwhile fails here rather than in the unlock.
        for p in paths {
            guard let st = try Syscall.status(of: staging.path + "/" + p), st.kind == .regular, st.size == layout.files[p] else {
                throw RemoteError.malformedRemote(.changedWhileDownloading(p))
            }
        }
        summary.remoteItems = layout.items
        summary.generation = try ManifestPrefix.generation(
            of: VaultDirectory.readFile(staging.path + "/manifest", limit: Manifest.maxFileSize))
        summary.seconds = Syscall.monotonicSeconds() - started
        return summary
    }
}

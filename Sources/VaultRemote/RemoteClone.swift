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
        var (layout, summary) = try head(target: target, rclone: rclone, into: staging)
        try rest(layout, items: blobs, target: target, rclone: rclone, into: staging, summary: &summary, progress: progress)
        return summary
    }

    /// The first part: the listing's checks, then the header and the
    /// manifest (small), so that a clone proves the password before any
    /// blob or drop-in comes (issue 43: a wrong password cost a 6.1 GiB
    /// download first).
    public static func head(target: String, rclone: Rclone, into staging: StagingDirectory) throws -> (RemoteLayout, FetchSummary) {
        let started = Syscall.monotonicSeconds()
        let layout = RemoteLayout(try rclone.list(target))
        try layout.checkVault(target: target)
        let paths = [RemoteNames.header, RemoteNames.manifest]
        var summary = FetchSummary()
        try fetch(paths, layout: layout, target: target, rclone: rclone, into: staging, summary: &summary, progress: nil)
        summary.remoteItems = layout.items
        summary.generation = try ManifestPrefix.generation(
            of: VaultDirectory.readFile(staging.path + "/manifest", limit: Manifest.maxFileSize))
        summary.seconds = Syscall.monotonicSeconds() - started
        return (layout, summary)
    }

    /// The second part: the complete drop-ins, and with `items` every blob
    /// the listing named (a thin clone takes none).
    public static func rest(_ layout: RemoteLayout, items: Bool, target: String, rclone: Rclone, into staging: StagingDirectory,
                            summary: inout FetchSummary, progress: ((UInt64, UInt64) -> Void)? = nil) throws {
        let started = Syscall.monotonicSeconds()
        var paths = items ? layout.items.keys.sorted().map { "items/" + $0 } : []
        for id in layout.dropIns { paths += ["inbox/\(id).item", "inbox/\(id).env"] }
        try fetch(paths, layout: layout, target: target, rclone: rclone, into: staging, summary: &summary, progress: progress)
        summary.seconds += Syscall.monotonicSeconds() - started
    }

    /// Downloads `paths`, fsyncs them, and checks that what arrived is what
    /// was listed: a file that changed or went missing meanwhile fails here
    /// rather than in the unlock.
    private static func fetch(_ paths: [String], layout: RemoteLayout, target: String, rclone: Rclone, into staging: StagingDirectory,
                              summary: inout FetchSummary, progress: ((UInt64, UInt64) -> Void)?) throws {
        try rclone.download(paths, from: target, into: staging.path, progress: progress)
        try staging.syncAll()
        for p in paths {
            guard let st = try Syscall.status(of: staging.path + "/" + p), st.kind == .regular, st.size == layout.files[p] else {
                throw RemoteError.malformedRemote(.changedWhileDownloading(p))
            }
        }
        summary.files += paths.count
        summary.bytes = paths.reduce(summary.bytes) { $0 &+ (layout.files[$1] ?? 0) }
    }
}

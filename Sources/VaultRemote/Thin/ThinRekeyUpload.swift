import System
import VaultCore

/// Where a thin vault's rekey sends its new blobs (VaultCore's
/// `BlobOffload`): to the items/ of its remote, one `rclone copy` per
/// batch, each blob then proven there as ThinEviction proves one (size and
/// last bytes, through a server started after the upload: a server started
/// before could answer from its cached listing of items/) and removed here.
///
/// They are there before any manifest names them. Another machine's push
/// in that time removes what its list of items does not name; the rekey
/// checks at its end that every one is still there before it switches
/// (`VaultError.rekeyBlobsGone`), so a removal costs a rerun, never data.
public final class ThinRekeyUpload: BlobOffload {
    let rclone: Rclone
    let target: String
    let paths: VaultPaths
    public let batchBytes: UInt64
    /// Blobs sent and proven so far, and their bytes.
    public private(set) var sent = 0
    public private(set) var sentBytes: UInt64 = 0

    public init(vault root: String, rclone: Rclone, target: String, batchBytes: UInt64) {
        (self.paths, self.rclone, self.target, self.batchBytes) = (VaultPaths(root: root), rclone, target, batchBytes)
    }

    public func offload(_ names: [String]) throws {
        try rclone.upload(names, from: paths.items, to: RemoteNames.join(target, "items"))
        let server = try RcloneServer(rclone: rclone, target: target)
        let (count, bytes) = try ThinEviction.evict(names, paths: paths, server: server)
        guard count == names.count else {
            let left = names.first { (try? Syscall.status(of: paths.item($0))) != nil } ?? names[0]   // only for the message
            throw RemoteError.malformedRemote(.notAsSent(left))
        }
        (sent, sentBytes) = (sent + count, sentBytes + bytes)
    }

    public func remoteBlobs() throws -> [String: UInt64] {
        try rclone.list(RemoteNames.join(target, "items"))
    }
}

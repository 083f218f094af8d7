import System
import VaultCore

/// What leaves a thin vault's items/ once it is on the remote: every blob
/// there whose remote copy is proven the same, never on a listing's word.
/// The proof is one range read per blob through the server: the remote
/// object's size (from Content-Range) and its last 64 bytes, which end in
/// the final chunk's tag, equal ours. A blob that another party replaced
/// there, truncated or never received stays here, and the next push sends
/// it again. (A remote could keep the tail and corrupt the middle; then the
/// blob's reads fail, exit 14, and `check --read-data` finds it, as it
/// would in a full vault's remote copy.)
public enum ThinEviction {
    static let tail = 64

    /// Returns how many blobs left and their bytes.
    @discardableResult
    public static func evict(vault root: String, server: RcloneServer) throws -> (count: Int, bytes: UInt64) {
        let paths = VaultPaths(root: root)
        return try evict(try RemotePush.localItems(paths).keys.sorted(), paths: paths, server: server)
    }

    /// The blobs `names` of items/ that are proven on the remote leave;
    /// returns how many and their bytes.
    static func evict(_ names: [String], paths: VaultPaths, server: RcloneServer) throws -> (count: Int, bytes: UInt64) {
        var (count, bytes) = (0, UInt64(0))
        for name in names {
            let path = paths.item(name)
            let local = try FileHandleFD(readingFrom: path)
            let size = local.size
            guard size >= UInt64(tail) else { continue }
            var ours = [UInt8](repeating: 0, count: tail)
            guard try ours.withUnsafeMutableBytes({ try local.read(at: size - UInt64(tail), into: $0) }) == tail else { continue }
            guard let (theirs, total) = try server.http.tail("items/" + name, count: tail), total == size, theirs == ours else { continue }
            try Syscall.unlink(path)
            (count, bytes) = (count + 1, bytes &+ size)
        }
        if count > 0 { try Syscall.fsyncDirectory(paths.items) }
        return (count, bytes)
    }
}

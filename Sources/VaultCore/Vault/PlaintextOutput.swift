import System
// Files the user names (outside the vault): never overwritten, created 0600.

public enum UserFiles {
    /// Erases a file or tree of plaintext that another thread may still be
    /// writing into (an interrupted extraction): first renamed out of the
    /// writer's way, so it can add nothing more, then files overwritten with
    /// zeros and unlinked, links unlinked (never followed), directories removed.
    @discardableResult
    public static func erase(_ path: FilePath) -> [FilePath] {
        let moved = FilePath(bytes: path.bytes + Array(".erasing".utf8))
        return Eraser.erase((try? Syscall.rename(path, moved)) != nil ? moved : path)
    }

    /// Whether anything (even a dangling symlink) is at `path`.
    public static func exists(_ path: String) -> Bool { ((try? Syscall.status(of: path)) ?? nil) != nil }

    /// Writes `bytes` to a new file at `path`: beside it under a temp name,
    /// fsync'ed, then linked into place only if `path` still does not exist.
    public static func writeNew(_ bytes: [UInt8], to path: String) throws {
        if exists(path) { throw VaultError.alreadyExists(path: path) }
        let temp: TempFile
        do { temp = try TempFile(beside: path) } catch let error as SystemError {
            throw error.on(path)
        }
        try bytes.withUnsafeBytes { try temp.file.write($0) }
        do { try temp.commit(to: path, noReplace: true) } catch let error as SystemError where error.errno == .fileExists {
            throw VaultError.alreadyExists(path: path)
        }
    }
}

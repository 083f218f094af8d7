import System

/// The writers' lock: an exclusive flock on DIR/lock, held until deinit.
/// Drop-ins never take it.
package final class WriterLock {
    private let file: FileHandleFD

    /// Takes the lock; `busy` if another writer has it, `readOnly` if this
    /// process cannot write the vault at all (a read-only mount, another
    /// user's copy).
    package init(_ paths: VaultPaths) throws {
        let fd: Int32
        do { fd = try Syscall.open(paths.lock, [.readWrite, .create, .noFollow]) } catch let error as SystemError
            where [Errno.readOnlyFileSystem, .permissionDenied, .notPermitted].contains(error.errno) {
            throw VaultError.readOnly(path: paths.root, reason: error.reason)
        }
        file = FileHandleFD(owning: fd, path: paths.lock)
        guard try Syscall.flock(fd) else { throw VaultError.busy }
    }
}

/// Whether some process holds a flock on `path` (a file being written).
func isLockedByWriter(_ path: String) -> Bool {
    guard let fd = try? Syscall.open(path, [.noFollow, .nonBlocking]) else { return false }
    defer { Syscall.close(fd) }
    return (try? Syscall.flock(fd)) == false
}

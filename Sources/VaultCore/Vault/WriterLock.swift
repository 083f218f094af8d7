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
            throw VaultError.readOnly(path: paths.root, cause: .denied(error.errno))
        }
        file = FileHandleFD(owning: fd, path: paths.lock)
        guard try Syscall.flock(fd) else { throw VaultError.busy }
    }
}

/// Whether some process holds a flock on `path` (a file being written).
/// What cannot be opened or tested counts as held: this answer decides
/// whether cleanup deletes a file, and "permission denied" (another user's
/// file while it is still 0600) is no proof that nobody writes it (issue 38).
/// Only a file that is gone, or a symbolic link (no writer's file), is not held.
func isLockedByWriter(_ path: String) -> Bool {
    let fd: Int32
    do { fd = try Syscall.open(path, [.noFollow, .nonBlocking]) } catch let error as SystemError
        where error.errno == .noSuchFile || error.errno == .tooManySymlinks {
        return false
    } catch {
        return true
    }
    defer { Syscall.close(fd) }
    do { return try !Syscall.flock(fd) } catch { return true }
}

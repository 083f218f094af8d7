import System

/// The writers' lock: an exclusive flock on DIR/lock, held until deinit.
/// Drop-ins never take it.
final class WriterLock {
    private let file: FileHandleFD

    init(_ paths: VaultPaths) throws {
        let fd = try Syscall.open(paths.lock, [.readWrite, .create, .noFollow])
        file = FileHandleFD(owning: fd)
        guard try Syscall.flock(fd) else { throw VaultError.busy }
    }
}

/// Whether some process holds a flock on `path` (a file being written).
func isLockedByWriter(_ path: String) -> Bool {
    guard let fd = try? Syscall.open(path, [.noFollow, .nonBlocking]) else { return false }
    defer { Syscall.close(fd) }
    return (try? Syscall.flock(fd)) == false
}

import System

/// `drop.lock` in the vault directory: `vault add` holds it shared from the
/// moment it reads the vault's public key until its envelope has landed;
/// `rekey` holds it exclusively while it takes in the last drop-ins and
/// switches keys. So no drop-in is ever sealed to a key the vault has
/// already left behind, and adds never wait for each other or for readers.
final class DropLock {
    private let fd: Int32

    /// Waits for the lock (`exclusive` for rekey); `waiting` is told first
    /// when it has to.
    init(_ paths: VaultPaths, exclusive: Bool, waiting: (() -> Void)? = nil) throws {
        let path = paths.dropLock
        do {
            fd = try Syscall.open(path, [.readOnly, .noFollow])
        } catch let error as SystemError where error.errno == .noSuchFile {
            fd = try Syscall.open(path, [.readWrite, .create, .noFollow])
        }
        do {
            if try !Syscall.flock(fd, exclusive: exclusive, wait: false) {
                waiting?()
                _ = try Syscall.flock(fd, exclusive: exclusive, wait: true)
            }
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    deinit { Syscall.close(fd) }
}

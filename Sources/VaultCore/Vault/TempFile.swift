import System
import VaultCrypto

/// A file being written next to where it will land, named `.tmp-<random>`,
/// flock'ed while open so cleanup can tell it from an abandoned one. Removed
/// on deinit unless committed.
final class TempFile {
    let path: String
    let file: FileHandleFD
    private var committed = false

    /// The file is created nameless (O_TMPFILE), locked, and only then
    /// linked under its temp name, so no cleanup can ever find it unlocked.
    /// Where O_TMPFILE is unsupported (some network file systems) it is
    /// created named and locked a moment later: a cleanup in that moment
    /// could take it, and the add then fails cleanly (nothing is lost that
    /// had been reported added).
    /// `announce` learns the temp path before the file exists (so an
    /// interrupt handler registered there can never miss it).
    /// `mode`: the file's permissions, if not 0600 (a shared inbox's 0644).
    init(beside target: String, announce: ((String) -> Void)? = nil, mode: UInt16? = nil) throws {
        let dir = VaultDirectory.directory(of: target)
        path = dir + "/" + VaultDirectory.tempPrefix + Hex.encode(SecureRandom.bytes(16))
        announce?(path)
        if let fd = try Syscall.openNameless(in: dir) {
            file = FileHandleFD(owning: fd, path: path)
            _ = try Syscall.flock(fd)
            try Syscall.linkNameless(fd, to: path)
        } else {
            file = try FileHandleFD(creating: path)
            _ = try Syscall.flock(file.fd)
        }
        if let mode { try Syscall.chmod(file.fd, mode) }
        file.startsWriteback = true
    }

    /// fsync, rename over `target` (or, with `noReplace`, only if it does not
    /// exist), fsync the directory. The flock stays held until deinit.
    /// Without `durable`, neither fsync: the caller makes a batch durable at
    /// once (one syncfs for thousands of files) before anything names them.
    func commit(to target: String, noReplace: Bool = false, durable: Bool = true) throws {
        if durable { try file.sync() }
        if noReplace { try Syscall.renameNoReplace(path, target) } else { try Syscall.rename(path, target) }
        committed = true
        guard durable else { return }
        do { try Syscall.fsyncDirectory(VaultDirectory.directory(of: target)) } catch let error as SystemError
            where error.errno == .permissionDenied {
            // A shared inbox (1733) cannot be opened by a dropper who is not
            // its owner; syncfs makes the rename durable all the same.
            try Syscall.syncFileSystem(of: file.fd)
        }
    }

    deinit { if !committed { try? Syscall.unlink(path) } }
}

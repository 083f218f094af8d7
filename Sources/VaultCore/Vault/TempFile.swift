import System
import VaultCrypto

/// A file being written next to where it will land, named `.tmp-<random>`,
/// flock'ed while open so cleanup can tell it from an abandoned one. Removed
/// on deinit unless committed.
package final class TempFile {
    package let path: String
    package let file: FileHandleFD
    private var committed = false
    /// Whether the file has a name before `commit` (`path`); a nameless one
    /// is linked under its target at commit.
    private let named: Bool

    /// The file is created nameless (O_TMPFILE), locked, and only then
    /// linked under its temp name, so no cleanup can ever find it unlocked.
    /// Where O_TMPFILE is unsupported (some network file systems) it is
    /// created named and locked a moment later: a cleanup in that moment
    /// could take it, and the add then fails cleanly (nothing is lost that
    /// had been reported added).
    /// `announce` learns the temp path before it names anything (so an
    /// interrupt handler registered there can never miss it).
    /// `mode`: the file's permissions, if not 0600 (a shared inbox's 0644).
    /// `nameless`: where O_TMPFILE works, the file gets no temp name at all
    /// and `commit` links it straight under its target, which must not
    /// exist (a drop-in's fresh random id): one link instead of a link and
    /// a rename, and a kill before the commit leaves nothing behind, not
    /// even for cleanup (thousands of times per many-file add).
    package init(beside target: String, announce: ((String) -> Void)? = nil, mode: UInt16? = nil, nameless: Bool = false) throws {
        let dir = VaultDirectory.directory(of: target)
        let temp = dir + "/" + VaultDirectory.tempPrefix + Hex.encode(SecureRandom.bytes(16))
        if let fd = try Syscall.openNameless(in: dir) {
            named = !nameless
            path = nameless ? target : temp
            file = FileHandleFD(owning: fd, path: path)
            _ = try Syscall.flock(fd)
            if named {
                announce?(temp)
                try Syscall.linkNameless(fd, to: temp)
            }
        } else {
            (named, path) = (true, temp)
            announce?(temp)
            file = try FileHandleFD(creating: temp)
            _ = try Syscall.flock(file.fd)
        }
        if let mode { try Syscall.chmod(file.fd, mode) }
        file.startsWriteback = true
    }

    /// fsync, rename over `target` (or, with `noReplace`, only if it does not
    /// exist; a nameless file is linked there and never replaces), fsync the
    /// directory. The flock stays held until deinit.
    /// Without `durable`, neither fsync: the caller makes a batch durable at
    /// once (one syncfs for thousands of files) before anything names them.
    package func commit(to target: String, noReplace: Bool = false, durable: Bool = true) throws {
        if durable { try file.sync() }
        if !named {
            try Syscall.linkNameless(file.fd, to: target)
        } else if noReplace {
            try Syscall.renameNoReplace(path, target)
        } else {
            try Syscall.rename(path, target)
        }
        committed = true
        guard durable else { return }
        do { try Syscall.fsyncDirectory(VaultDirectory.directory(of: target)) } catch let error as SystemError
            where error.errno == .permissionDenied {
            // A shared inbox (1733) cannot be opened by a dropper who is not
            // its owner; syncfs makes the rename durable all the same.
            try Syscall.syncFileSystem(of: file.fd)
        }
    }

    /// Best effort (deinit cannot throw): a temp file left is a leftover the next writer removes.
    deinit { if !committed && named { try? Syscall.unlink(path) } }
}

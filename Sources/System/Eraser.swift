
/// Erases plaintext trees: every regular file overwritten with zeros and
/// fsync'ed, then unlinked; symbolic links unlinked (never followed);
/// directories made writable (a restored 0500 one would keep its contents)
/// and removed. By bytes end to end: a name that is not UTF-8
/// (`caf\xe9.txt`) is erased like any other, where a String would have
/// named another file and left the plaintext behind.
///
/// Overwriting cannot defeat copy-on-write file systems or SSD wear
/// levelling (docs/SECURITY.md); it does defeat a plain undelete.
public enum Eraser {
    /// Erases `path` and everything under it. Returns what could not be
    /// erased (empty if all went), for the caller to report: plaintext left
    /// behind must never be silent.
    @discardableResult
    public static func erase(_ path: FilePath) -> [FilePath] {
        let status: FileStatus?
        do { status = try Syscall.status(of: path) } catch { return [path] }
        guard let status else { return [] }
        switch status.kind {
        case .directory:
            if status.permissions & 0o700 != 0o700 { try? Syscall.setModeAndTime(path, mode: 0o700, modified: status.modified) }
            guard let names = try? Syscall.listDirectory(path) else { return [path] }
            var failed = names.flatMap { erase(path.appending($0)) }
            do { try Syscall.rmdir(path) } catch { failed.append(path) }
            return failed
        case .regular:
            var failed = overwrite(path, size: status.size) ? [] : [path]
            do { try Syscall.unlink(path) } catch { failed = [path] }
            return failed
        default:
            do { try Syscall.unlink(path) } catch { return [path] }
            return []
        }
    }

    @discardableResult
    public static func erase(_ path: String) -> [FilePath] { erase(FilePath(path)) }

    /// Zeros over the file's bytes, fsync'ed; false if that failed.
    private static func overwrite(_ path: FilePath, size: UInt64) -> Bool {
        guard let fd = try? Syscall.open(path, [.writeOnly, .noFollow, .nonBlocking]) else { return false }
        defer { Syscall.close(fd) }
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        var left = size
        while left > 0 {
            let n = Int(min(left, UInt64(zeros.count)))
            guard (try? zeros.withUnsafeBytes({ try Syscall.writeFully(fd, UnsafeRawBufferPointer(rebasing: $0[..<n])) })) != nil else {
                return false
            }
            left -= UInt64(n)
        }
        return (try? Syscall.fsync(fd)) != nil
    }
}

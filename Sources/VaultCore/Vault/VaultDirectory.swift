import Foundation  // ContiguousBytes
import VaultCrypto
import System

/// The vault directory's files as a whole: its layout checked, small files read
/// whole and bounded, files replaced atomically, its listings by name.
package enum VaultDirectory {
    package static let tempPrefix = ".tmp-"

    /// Refuses a vault whose own paths are symbolic links or of the wrong
    /// type. An absent `items/` or `inbox/` is made (empty, 0700): a plain
    /// copy of a remote has none when the remote had nothing there (object
    /// stores have no empty directories), and an empty one means the same.
    static func checkLayout(_ paths: VaultPaths) throws {
        guard let root = try Syscall.status(of: paths.root) else { throw VaultError.notAVault }
        guard root.kind == .directory else {
            if root.kind == .symlink { throw VaultError.unsafeVaultPath(paths.root) }
            throw VaultError.notAVault
        }
        guard let header = try Syscall.status(of: paths.header) else { throw VaultError.notAVault }
        guard header.kind == .regular else { throw VaultError.unsafeVaultPath(paths.header) }
        guard let manifest = try Syscall.status(of: paths.manifest) else { throw VaultError.corruptedOrTampered }
        guard manifest.kind == .regular else { throw VaultError.unsafeVaultPath(paths.manifest) }
        for path in [paths.items, paths.inbox] where try Syscall.status(of: path) == nil {
            do { try Syscall.mkdir(path) } catch let e as SystemError where e.errno == .fileExists {}
        }
        for (path, type) in [(paths.items, FileStatus.Kind.directory), (paths.inbox, .directory)] {
            guard let st = try Syscall.status(of: path) else { throw VaultError.corruptedOrTampered }
            guard st.kind == type else { throw VaultError.unsafeVaultPath(path) }
        }
    }

    /// Reads a whole small file (header, manifest, envelope) of at most
    /// `limit` bytes, refusing symbolic links and anything larger.
    package static func readFile(_ path: some FilePathRepresentable, limit: Int) throws -> [UInt8] {
        let f = try FileHandleFD(readingFrom: path)
        guard f.size <= UInt64(limit) else { throw VaultError.corruptedOrTampered }
        var b = [UInt8](repeating: 0, count: Int(f.size))
        let n = try b.withUnsafeMutableBytes { try f.read(at: 0, into: $0) }
        guard n == b.count else { throw VaultError.corruptedOrTampered }
        return b
    }

    /// Writes `bytes` to `path` atomically: temp file, fsync, rename, fsync
    /// dir (without `durable`, only the rename: a cache's file, which a
    /// crash may leave unreadable).
    package static func atomicWrite(_ bytes: some ContiguousBytes, to path: String, mode: UInt16? = nil, durable: Bool = true) throws {
        let temp = try TempFile(beside: path, mode: mode)
        try bytes.withUnsafeBytes { try temp.file.write($0) }
        try temp.commit(to: path, durable: durable)
    }

    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

extension VaultDirectory {
    /// The names in one of the vault's own directories that are valid UTF-8,
    /// in byte order. vault writes only ASCII names there; any other name is
    /// a stray, which `check` handles by its bytes (`strays(in:)`).
    package static func names(in directory: String) throws -> [String] {
        try Syscall.listDirectory(directory).compactMap { String(validating: $0, as: UTF8.self) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The names in `directory` that are not valid UTF-8, as bytes.
    static func strays(in directory: String) throws -> [[UInt8]] {
        try Syscall.listDirectory(directory).filter { String(validating: $0, as: UTF8.self) == nil }
    }
}

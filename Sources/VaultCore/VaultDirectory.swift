import VaultCrypto
import System

// The vault on disk (docs/FORMAT.md, "Layout"):
//
//   DIR/vault.header      the header (VaultHeader.swift), written last at init
//   DIR/manifest          the encrypted manifest (Manifest.swift)
//   DIR/items/<id hex>    one sealed item per stored item (ItemCipher.swift)
//   DIR/inbox/<id>.item   a drop-in's sealed content
//   DIR/inbox/<id>.env    its envelope (DropInEnvelope.swift), written second
//   DIR/lock              the writers' flock
//   DIR/attempts          the wrong-password delay state (AttemptThrottle.swift)
//   DIR/rekey.pending     a rekey's new header and manifest (RekeySwitch.swift)
//   .tmp-<hex>            a file being written, in the directory it will land in
//
// Directories are 0700, files 0600. Any of these paths being a symbolic link
// makes the vault refuse to open.

public struct VaultPaths: Sendable {
    public let root: String
    /// Trailing slashes are dropped: lstat("link/") follows the link, which
    /// would let a symbolic link to a vault pass the refusal.
    public init(root: String) {
        var r = Substring(root)
        while r.count > 1, r.hasSuffix("/") { r.removeLast() }
        self.root = String(r)
    }
    public var header: String { root + "/vault.header" }
    public var manifest: String { root + "/manifest" }
    public var items: String { root + "/items" }
    public var inbox: String { root + "/inbox" }
    public var lock: String { root + "/lock" }
    public var attempts: String { root + "/attempts" }
    public var rekeyPending: String { root + "/rekey.pending" }
    public func item(_ blobName: String) -> String { items + "/" + blobName }
    public func dropInContent(_ blobName: String) -> String { inbox + "/" + blobName + ".item" }
    public func dropInEnvelope(_ blobName: String) -> String { inbox + "/" + blobName + ".env" }
}

enum VaultDirectory {
    static let tempPrefix = ".tmp-"

    /// Refuses a vault whose own paths are symbolic links or of the wrong type.
    static func checkLayout(_ paths: VaultPaths) throws {
        guard let root = try Syscall.status(of: paths.root) else { throw VaultError.notAVault }
        guard root.kind == .directory else {
            if root.kind == .symlink { throw VaultError.unsafeVaultPath(paths.root) }
            throw VaultError.notAVault
        }
        guard let header = try Syscall.status(of: paths.header) else { throw VaultError.notAVault }
        guard header.kind == .regular else { throw VaultError.unsafeVaultPath(paths.header) }
        for (path, type) in [(paths.manifest, FileStatus.Kind.regular), (paths.items, .directory), (paths.inbox, .directory)] {
            guard let st = try Syscall.status(of: path) else { throw VaultError.corruptedOrTampered }
            guard st.kind == type else { throw VaultError.unsafeVaultPath(path) }
        }
    }

    /// Reads a whole small file (header, manifest, envelope) of at most
    /// `limit` bytes, refusing symbolic links and anything larger.
    static func readFile(_ path: some FilePathRepresentable, limit: Int) throws -> [UInt8] {
        let f = try FileHandleFD(readingFrom: path)
        guard f.size <= UInt64(limit) else { throw VaultError.corruptedOrTampered }
        var b = [UInt8](repeating: 0, count: Int(f.size))
        let n = try b.withUnsafeMutableBytes { try f.read(at: 0, into: $0) }
        guard n == b.count else { throw VaultError.corruptedOrTampered }
        return b
    }

    /// Writes `bytes` to `path` atomically: temp file, fsync, rename, fsync dir.
    static func atomicWrite(_ bytes: [UInt8], to path: String) throws {
        let temp = try TempFile(beside: path)
        try bytes.withUnsafeBytes { try temp.file.write($0) }
        try temp.commit(to: path)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

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
    init(beside target: String, announce: ((String) -> Void)? = nil) throws {
        let dir = VaultDirectory.directory(of: target)
        path = dir + "/" + VaultDirectory.tempPrefix + Hex.encode(SecureRandom.bytes(16))
        announce?(path)
        if let fd = try Syscall.openNameless(in: dir) {
            file = FileHandleFD(owning: fd)
            _ = try Syscall.flock(fd)
            try Syscall.linkNameless(fd, to: path)
        } else {
            file = try FileHandleFD(creating: path)
            _ = try Syscall.flock(file.fd)
        }
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
        if durable { try Syscall.fsyncDirectory(VaultDirectory.directory(of: target)) }
    }

    deinit { if !committed { try? Syscall.unlink(path) } }
}

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

extension VaultDirectory {
    /// The names in one of the vault's own directories that are valid UTF-8,
    /// in byte order. vault writes only ASCII names there; any other name is
    /// a stray, which `check` handles by its bytes (`strays(in:)`).
    static func names(in directory: String) throws -> [String] {
        try Syscall.listDirectory(directory).compactMap { String(validating: $0, as: UTF8.self) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The names in `directory` that are not valid UTF-8, as bytes.
    static func strays(in directory: String) throws -> [[UInt8]] {
        try Syscall.listDirectory(directory).filter { String(validating: $0, as: UTF8.self) == nil }
    }
}

import System
import VaultCore

/// A thin vault's `thin` file (docs/FORMAT.md, "Thin vaults"): which remote
/// holds the blobs that are not in items/, and the cache's bound.
///
///     "vault thin v1\n" REMOTE "\n" CACHE_BYTES "\n"
///
/// REMOTE is a remote's name in the vault's `remotes` file; CACHE_BYTES a
/// decimal without leading zeros, at least `minimumCache`. Exactly that
/// shape, at most 256 bytes; written atomically. No file: a full vault.
public struct ThinVault: Equatable, Sendable {
    public let remote: String
    public let cacheBytes: UInt64

    static let firstLine = "vault thin v1"
    /// 2 GiB: a laptop's share, 0.5 % of a 400 GB remote.
    public static let defaultCache: UInt64 = 2 << 30
    /// Below 64 MiB the snapshot trees of a large vault would not stay.
    public static let minimumCache: UInt64 = 64 << 20

    public init(remote: String, cacheBytes: UInt64) {
        (self.remote, self.cacheBytes) = (remote, cacheBytes)
    }

    public static func path(_ vault: String) -> String { VaultPaths(root: vault).root + "/thin" }
    public static func cacheDirectory(_ vault: String) -> String { VaultPaths(root: vault).root + "/cache" }

    /// The vault's thin file, or nil for a full vault.
    public static func read(vault: String) throws -> ThinVault? {
        let bytes: [UInt8]
        do { bytes = try VaultDirectory.readFile(path(vault), limit: 256) } catch let e as SystemError where e.errno == .noSuchFile {
            return nil
        } catch VaultError.corruptedOrTampered {
            throw RemoteError.malformedRemote(.thinFileDamaged)
        }
        guard let thin = parse(bytes) else { throw RemoteError.malformedRemote(.thinFileDamaged) }
        return thin
    }

    static func parse(_ bytes: [UInt8]) -> ThinVault? {
        guard bytes.last == 10 else { return nil }
        let lines = bytes.dropLast().split(separator: 10, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard lines.count == 3, lines[0] == firstLine, RemoteNames.isValidName(lines[1]),
              let bound = UInt64(lines[2]), String(bound) == lines[2], bound >= minimumCache else { return nil }
        return ThinVault(remote: lines[1], cacheBytes: bound)
    }

    var bytes: [UInt8] { Array("\(Self.firstLine)\n\(remote)\n\(cacheBytes)\n".utf8) }

    public func write(vault: String) throws {
        try VaultDirectory.atomicWrite(bytes, to: Self.path(vault))
    }

    public static func remove(vault: String) throws {
        try Syscall.unlink(path(vault))
        try Syscall.fsyncDirectory(VaultPaths(root: vault).root)
    }
}

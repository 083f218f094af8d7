import Synchronization
import System
import VaultCore
import VaultCrypto

/// The thin vault's cache of remote blocks on disk: `cache/` in the vault
/// directory, one file a block, named `<blob>.<blob size>.<block index>`
/// (docs/FORMAT.md, "Thin vaults"). Sealed bytes as the remote holds them,
/// authenticated by every reader like the remote's own, so a damaged or
/// planted file here costs a failed read, never a wrong byte. Written to a
/// temporary name and renamed, unsynced (a file of the wrong length after
/// a crash is deleted when read); kept within `bound` bytes by deleting
/// the least recently used (by modification time, which a hit refreshes)
/// when this command ends.
public final class BlockCache: @unchecked Sendable {
    public let directory: String
    public let bound: UInt64
    /// Blob sizes of the headers kept here when this command began.
    private let known: [String: UInt64]
    private let written = Mutex<UInt64>(0)

    public init(directory: String, bound: UInt64) throws {
        self.directory = directory
        self.bound = bound
        try Vault.ensureDirectory(directory)
        var known: [String: UInt64] = [:]
        for name in try VaultDirectory.names(in: directory) {
            guard let (blob, size, index) = Self.parse(name), index == nil else { continue }
            known[blob] = size
        }
        self.known = known
    }

    /// A block's file; `index` nil: the item header's (`<blob>.<size>.h`).
    static func name(_ blob: String, size: UInt64, index: UInt64?) -> String { "\(blob).\(size).\(index.map(String.init) ?? "h")" }

    /// (blob, size, index or nil for the header) from a cache file's name;
    /// nil for any other name.
    static func parse(_ name: String) -> (String, UInt64, UInt64?)? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, RemoteNames.isItemID(parts[0]), let size = UInt64(parts[1]), String(size) == parts[1] else { return nil }
        if parts[2] == "h" { return (String(parts[0]), size, nil) }
        guard let index = UInt64(parts[2]), String(index) == parts[2] else { return nil }
        return (String(parts[0]), size, index)
    }

    /// Removes every block of the blobs `gone` (item ids, hex) from the
    /// cache in `directory`: a rekey's old blobs, sealed under the keys it
    /// left, do not stay on this disk after they leave the remote.
    public static func forget(_ gone: Set<String>, directory: String) throws {
        guard try Syscall.status(of: directory) != nil else { return }
        var removed = false
        for name in try VaultDirectory.names(in: directory) {
            guard let (blob, _, _) = parse(name), gone.contains(blob) else { continue }
            try Syscall.unlink(directory + "/" + name)
            removed = true
        }
        if removed { try Syscall.fsyncDirectory(directory) }
    }

    /// A blob's size and item header, proven by an earlier command's read.
    func header(of blob: String) -> (UInt64, [UInt8])? {
        guard let size = known[blob] else { return nil }
        let count = ItemHeader.length
        guard let bytes = read(name: Self.name(blob, size: size, index: nil), count: count) else { return nil }
        return (size, bytes)
    }

    func writeHeader(_ blob: String, size: UInt64, _ bytes: [UInt8]) {
        write(name: Self.name(blob, size: size, index: nil), bytes)
    }

    /// Block `index` of `blob` if it is here at exactly `count` bytes.
    func read(_ blob: String, size: UInt64, index: UInt64, count: Int) -> [UInt8]? {
        read(name: Self.name(blob, size: size, index: index), count: count)
    }

    private func read(name: String, count: Int) -> [UInt8]? {
        let path = directory + "/" + name
        // A block that is not here, or cannot be read, is fetched again.
        guard let file = try? FileHandleFD(readingFrom: path) else { return nil }
        guard file.size == UInt64(count), let bytes = try? file.readAll(limit: count), bytes.count == count else {
            try? Syscall.unlink(path)   // the wrong length: torn by a crash; fetched again
            return nil
        }
        try? Syscall.setTime(file.fd, modified: Syscall.now())   // recency only: a block not refreshed leaves sooner
        return bytes
    }

    /// Keeps a fetched block (best effort: a cache that cannot be written
    /// costs the next read a fetch, nothing else).
    func write(_ blob: String, size: UInt64, index: UInt64, _ bytes: [UInt8]) {
        write(name: Self.name(blob, size: size, index: index), bytes)
    }

    private func write(name: String, _ bytes: [UInt8]) {
        let path = directory + "/" + name
        guard let temp = try? TempFile(beside: path) else { return }
        do {
            try bytes.withUnsafeBytes { try temp.file.write($0) }
            try temp.commit(to: path, durable: false)
            written.withLock { $0 &+= UInt64(bytes.count) }
        } catch {
            return   // the temporary file goes with `temp`
        }
    }

    /// Deletes the least recently used blocks until the cache holds at most
    /// `bound` bytes; and temporary files an interrupted run left (older
    /// than an hour: another command may be writing its own now).
    public func trim() throws {
        var files: [(name: String, size: UInt64, time: Int64)] = []
        var total: UInt64 = 0
        let now = Syscall.now()
        for name in try VaultDirectory.names(in: directory) {
            let path = directory + "/" + name
            guard let st = try Syscall.status(of: path), st.kind == .regular else { continue }
            if name.hasPrefix(VaultDirectory.tempPrefix) {
                if now - st.modified > 3600 { try? Syscall.unlink(path) }   // another run's, if it is young; best effort
                continue
            }
            files.append((name, st.size, st.modified))
            total &+= st.size
        }
        guard total > bound else { return }
        for f in files.sorted(by: { $0.time < $1.time }) where total > bound {
            try Syscall.unlink(directory + "/" + f.name)
            total -= f.size
        }
    }
}

import Synchronization
import VaultBackup
import VaultCore

/// The vault's backup snapshots as the mount reads them (`snapshots/HOST/TIME/`
/// in MountTree), through `SnapshotReader`'s public calls only.
///
/// Nothing is read when mounted: the snapshot records are opened the first
/// time `snapshots/` is looked into, one at a time, and only their host and
/// time are kept. A snapshot's trees are read when one of its directories
/// is looked into, and a file's pieces when they are read, each verified by
/// the reader. At most `readersKept` readers are open at once (each holds a
/// few packs open), so memory does not grow with the number of snapshots.
///
/// Everything in a snapshot was chosen by whoever dropped it: a snapshot
/// that does not open is left out; and the nodes a snapshot's directories
/// make in the mount are charged against the entries it says it has (as
/// `SnapshotReader.walk` does), so one tree reused everywhere cannot make
/// a `find` through the mount grow the mount's memory without end.
///
/// @unchecked Sendable: `SnapshotReader` and `UnlockedVault` are not
/// Sendable; both are used only under `lock`, one caller at a time, and the
/// vault is only read (see MountedVault).
final class MountedSnapshots: @unchecked Sendable {
    /// A snapshot as `snapshots/` lists it.
    struct Listed: Sendable {
        let index: Int
        let host: String
        let start: (seconds: Int64, nanoseconds: UInt32)
        let paths: [[UInt8]]
        let root: PieceRef
    }

    static let readersKept = 4
    private let vault: UnlockedVault
    private let lock = Mutex(())
    private var entries: [ManifestEntry] = []
    private var readers: [(index: Int, reader: SnapshotReader)] = []
    /// Nodes each snapshot may still make in the mount.
    private var budgets: [Int: UInt64] = [:]

    init(_ vault: UnlockedVault) { self.vault = vault }

    /// Whether the vault has snapshots (from the manifest alone).
    var any: Bool { !vault.snapshotEntries.isEmpty }

    /// Opens every snapshot record once, oldest first; one that does not open is left out.
    func list() -> [Listed] {
        lock.withLock { _ in
            let all = SnapshotReader.all(vault)
            entries = all.map(\.entry)
            readers = []
            return all.enumerated().map { i, r in
                let s = r.snapshot
                budgets[i] = min(SnapshotReader.maxEntries, s.counts.files &+ s.counts.directories &+ s.counts.symlinks &+ 1)
                return Listed(index: i, host: s.host, start: s.start, paths: s.paths, root: s.root)
            }
        }
    }

    /// A directory's entries, charged against the snapshot's budget.
    func tree(_ index: Int, _ ref: PieceRef) throws -> [TreeEntry] {
        try lock.withLock { _ in
            let entries = try reader(index).tree(ref)
            let left = budgets[index] ?? 0
            guard UInt64(entries.count) <= left else { throw VaultError.corruptedOrTampered }   // more entries than it says
            budgets[index] = left - UInt64(entries.count)
            return entries
        }
    }

    /// One of a directory's entries, read again (a file's pieces are kept
    /// only while it is open, not in the mount's tree).
    func entry(_ index: Int, tree ref: PieceRef, named name: [UInt8]) throws -> TreeEntry? {
        try lock.withLock { _ in try reader(index).tree(ref).first { $0.name == name } }
    }

    /// A file's piece, verified against its id.
    func piece(_ index: Int, _ ref: PieceRef, into bytes: inout [UInt8]) throws {
        try lock.withLock { _ in try reader(index).read(ref, into: &bytes, limit: Chunker.maxSize) }
    }

    /// Snapshot `index`'s reader (under `lock`): kept, or opened again.
    private func reader(_ index: Int) throws -> SnapshotReader {
        if let i = readers.firstIndex(where: { $0.index == index }) { return readers[i].reader }
        guard entries.indices.contains(index) else { throw VaultError.corruptedOrTampered }
        let r = try SnapshotReader(vault, entries[index])
        if readers.count >= Self.readersKept { readers.removeFirst() }
        readers.append((index, r))
        return r
    }
}

/// An open file of a snapshot: its pieces located by offset, the last one
/// read kept for the next read (a piece is verified whole, at most
/// `Chunker.maxSize`, so a read never releases unverified bytes).
final class SnapshotFileContent: MountContent, @unchecked Sendable {
    // @unchecked: used under its OpenFile's lock, one read at a time.
    private let snapshots: MountedSnapshots
    private let index: Int
    private let pieces: [PieceRef]
    /// Where each piece starts in the file (Tree.decode checked that the counts add up to the size).
    private let starts: [UInt64]
    private var cached: Int?
    private var bytes: [UInt8] = []

    init(_ snapshots: MountedSnapshots, _ index: Int, _ entry: TreeEntry) {
        (self.snapshots, self.index, pieces) = (snapshots, index, entry.pieces)
        var at: UInt64 = 0
        starts = entry.pieces.map { p in defer { at += UInt64(p.count) }; return at }
    }

    /// The bytes are copied out of the pieces into a buffer of their own
    /// (a read may span several pieces, each verified whole when it is read).
    func bytes(at offset: UInt64, count: Int) throws -> HeldBytes {
        try HeldBytes.filled(count: count) { try read(at: offset, into: $0) }
    }

    private func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let at = offset + UInt64(done)
            // The last piece starting at or before `at`.
            var (low, high) = (0, starts.count)
            while high - low > 1 {
                let mid = (low + high) / 2
                if starts[mid] <= at { low = mid } else { high = mid }
            }
            guard low < pieces.count, at >= starts[low] else { break }
            if cached != low {
                cached = nil
                try snapshots.piece(index, pieces[low], into: &bytes)
                cached = low
            }
            let start = Int(at - starts[low])
            guard start < bytes.count else { break }
            let n = min(buffer.count - done, bytes.count - start)
            bytes.withUnsafeBytes { buffer.baseAddress!.advanced(by: done).copyMemory(from: $0.baseAddress! + start, byteCount: n) }
            done += n
        }
        return done
    }
}

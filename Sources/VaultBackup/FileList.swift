import ByteLayout
import System
import VaultCore
import VaultCrypto

// The last snapshot's regular files, in the cache (docs/FORMAT.md,
// "Backups: the cache"), so that an unchanged file is not read again:
//
//   "VFILES02" || key check (32) || record... || "VEND" || SHA-256 of every byte before "VEND"
//   key check = HMAC-SHA256(piece key, "vault file list"): a list made under
//   another key (a cache whose key was replaced) is no list, since its
//   references name pieces by that key
//   record = path length u32be || path || device u64be || inode u64be || size u64be
//            || mtime s i64be || mtime ns u32be || ctime s i64be || ctime ns u32be
//            || piece count u32be || piece reference (64) × count
//
// "VFILES01" lists (60-byte references) are no list of this shape: the next
// backup reads every file once, as after a lost cache.
//
// A path is the file's names from the snapshot's root tree down, joined by
// NUL bytes. The walk visits directories depth first, each in name-byte
// order, which is exactly the byte order of these paths (NUL sorts before
// every name byte): so the list is written in order as the walk goes, and
// read back the same way, one record at a time, at flat memory.

struct FileRecord {
    var path: [UInt8]
    var device: UInt64, inode: UInt64, size: UInt64
    var modified: Int64, modifiedNanoseconds: UInt32, changed: Int64, changedNanoseconds: UInt32
    var pieces: [PieceRef]

    func matches(_ st: FileStatus) -> Bool {
        device == st.device && inode == st.inode && size == st.size && modified == st.modified
            && modifiedNanoseconds == UInt32(st.modifiedNanoseconds) && changed == st.changed
            && changedNanoseconds == UInt32(st.changedNanoseconds)
    }
}

enum FileList {
    static let magic = Array("VFILES02".utf8)
    static let end = Array("VEND".utf8)
    static let maxPath = 1 << 16
    static let keyCheckLabel = Array("vault file list".utf8)
    static let headerLength = magic.count + 32
}

/// Writes a new file list beside its final name; `commit` renames it there.
final class FileListWriter {
    private let final: String
    private let temp: String
    private let file: FileHandleFD
    private let hash: SHA256
    private var buffer = ByteWriter(FileList.magic)

    init(replacing path: String, key: PieceKey) throws {
        buffer.bytes(try key.id(of: FileList.keyCheckLabel).bytes)
        final = path
        temp = path + ".new-\(Syscall.processID)"
        try? Syscall.unlink(temp)
        file = try FileHandleFD(creating: temp)
        hash = try SHA256()
    }

    func append(_ r: FileRecord) throws {
        buffer.u32(UInt32(r.path.count)); buffer.bytes(r.path)
        buffer.u64(r.device); buffer.u64(r.inode); buffer.u64(r.size)
        buffer.i64(r.modified); buffer.u32(r.modifiedNanoseconds); buffer.i64(r.changed); buffer.u32(r.changedNanoseconds)
        buffer.u32(UInt32(r.pieces.count))
        for p in r.pieces { p.encode(into: &buffer) }
        if buffer.bytes.count >= 1 << 20 { try flush() }
    }

    private func flush() throws {
        try hash.update(buffer.bytes)
        try buffer.bytes.withUnsafeBytes { try file.write($0) }
        buffer.removeAll()
    }

    func commit() throws {
        try flush()
        let sum = try hash.finish()
        try (FileList.end + sum).withUnsafeBytes { try file.write($0) }
        try file.sync()
        try Syscall.rename(temp, final)
    }

    /// Not committed: the partial list goes.
    func discard() { try? Syscall.unlink(temp) }
}

/// Reads a file list forward, record by record. Opened only if its whole
/// checksum verifies (one pass first), so a damaged list is no list.
final class FileListCursor {
    private let file: FileHandleFD
    private let bodyEnd: UInt64
    private var position: UInt64
    private var buffer: [UInt8] = []
    private var start = 0
    private var current: FileRecord?
    private var done = false

    init?(path: String, key: PieceKey) {
        guard let f = try? FileHandleFD(readingFrom: path), f.size >= UInt64(FileList.headerLength + 36) else { return nil }
        file = f
        bodyEnd = f.size - 36
        position = UInt64(FileList.headerLength)
        guard (try? Self.verify(f, bodyEnd: bodyEnd)) == true else { return nil }
        var check = [UInt8](repeating: 0, count: 32)
        guard (try? check.withUnsafeMutableBytes({ try f.read(at: UInt64(FileList.magic.count), into: $0) })) == 32,
              let want = try? key.id(of: FileList.keyCheckLabel), (try? PieceID(check)) == want else { return nil }
        advance()
    }

    private static func verify(_ f: FileHandleFD, bodyEnd: UInt64) throws -> Bool {
        let h = try SHA256()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var at: UInt64 = 0
        while at < bodyEnd {
            let n = Int(min(UInt64(chunk.count), bodyEnd - at))
            guard try chunk.withUnsafeMutableBytes({ try f.read(at: at, into: .init(rebasing: $0[..<n])) }) == n else { return false }
            if at == 0, Array(chunk[..<min(n, FileList.magic.count)]) != FileList.magic { return false }
            try chunk.withUnsafeBytes { try h.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            at += UInt64(n)
        }
        var tail = [UInt8](repeating: 0, count: 36)
        guard try tail.withUnsafeMutableBytes({ try f.read(at: bodyEnd, into: $0) }) == 36 else { return false }
        let sum = try h.finish()
        return Array(tail[..<4]) == FileList.end && constantTimeEqual(Array(tail[4...]), sum)
    }

    /// At least `n` unread bytes in `buffer` from `start`, or false at the end.
    private func fill(_ n: Int) -> Bool {
        if buffer.count - start >= n { return true }
        buffer.removeFirst(start)
        start = 0
        while buffer.count < n {
            let want = Int(min(UInt64(max(n - buffer.count, 1 << 20)), bodyEnd - position))
            guard want > 0 else { return false }
            var more = [UInt8](repeating: 0, count: want)
            guard (try? more.withUnsafeMutableBytes({ try file.read(at: position, into: $0) })) == want else { return false }
            buffer += more
            position += UInt64(want)
        }
        return true
    }

    private func take(_ n: Int) -> [UInt8]? {
        guard fill(n) else { return nil }
        defer { start += n }
        return Array(buffer[start..<(start + n)])
    }

    private func advance() {
        current = nil
        guard !done, let head = take(4) else { done = true; return }
        var r = ByteReader(head)
        guard let length = try? Int(r.u32()), length <= FileList.maxPath, let path = take(length),
              let fixed = take(48), let countBytes = take(4) else { done = true; return }
        var f = ByteReader(fixed), c = ByteReader(countBytes)
        guard let count = try? Int(c.u32()), count <= Tree.maxLength / PieceRef.length,
              let refBytes = take(count * PieceRef.length) else { done = true; return }
        var refs = ByteReader(refBytes)
        do {
            current = FileRecord(path: path, device: try f.u64(), inode: try f.u64(), size: try f.u64(),
                                 modified: try f.i64(), modifiedNanoseconds: try f.u32(),
                                 changed: try f.i64(), changedNanoseconds: try f.u32(),
                                 pieces: try (0..<count).map { _ throws(ByteLayoutError) in try PieceRef.decode(&refs) })
        } catch { done = true }
    }

    /// The record for `path`, if the list has one. Paths must be asked for
    /// in increasing order; the cursor never goes back.
    func record(for path: [UInt8]) -> FileRecord? {
        while let c = current, c.path.lexicographicallyPrecedes(path) { advance() }
        guard let c = current, c.path == path else { return nil }
        return c
    }
}

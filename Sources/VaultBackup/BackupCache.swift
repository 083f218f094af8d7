import ByteLayout
import System
import VaultCore
import VaultCrypto

// A host's backup cache, `$XDG_CACHE_HOME/vault/<vault id hex>/` (0700;
// files 0600; docs/FORMAT.md, "Backups: the cache"):
//
//   key       the piece key (32 bytes), written once, atomically
//   pieces    "VPIECES2" || block...   block = count u32be || record × count || SHA-256(count || records)[0..<16]
//             record = piece id (32) || pack id (16) || offset u64be || length u32be || stored u32be
//   files-*   the last snapshot's file list for one host and set of paths (FileList.swift)
//
// A block is appended (and synced) when a pack has landed in the inbox, so
// a killed backup's packs are reused by the next one. Everything here is
// only a hint: a block that does not check, or a pack that is no longer in
// the vault directory (in items/, or whole in the inbox), is dropped, and
// what it named is read and stored again. Slower, never wrong. So is a log
// of another shape ("VPIECES1", before pieces were compressed): it is
// started anew, never read as this one. A pack whose presence cannot be
// known (permission denied: another user's vault shared before items/ was
// made searchable) is neither used nor dropped: its pieces are stored
// again this time, and the log keeps it for when it can be known.

public final class BackupCache {
    public let directory: String
    public let key: PieceKey
    /// Pieces stored by this host, by id; packs by index into `packs`.
    private var pieces: [PieceID: Location] = [:]
    private var packs: [[UInt8]] = []
    private var packIndex: [[UInt8]: UInt32] = [:]
    static let magic = Array("VPIECES2".utf8)
    static let recordLength = 64
    /// 2^24 pieces (16 TiB of 1 MiB pieces): a longer file is not a cache of ours.
    static let maxLength = magic.count + (1 << 24) * (recordLength + 20)

    struct Location { let pack: UInt32, offset: UInt64, count: UInt32, stored: UInt32 }

    /// One piece of a pack, as the log records it.
    public struct Record {
        public let id: PieceID, offset: UInt64, count: UInt32, stored: UInt32
    }

    public var pieceCount: Int { pieces.count }
    /// Packs of the log left unused because whether they are still in the
    /// vault could not be known (`PackPresence.unknown`).
    public private(set) var unconfirmedPacks = 0
    var piecesPath: String { directory + "/pieces" }

    /// Opens (or makes) the cache of `vaultID` under `base`; `vault`'s
    /// directory says which packs are still there.
    /// The owner's backups also keep what a repack of a gone pack kept, as
    /// their repack note says (RepackNotes); another user's do not.
    public convenience init(base: String, vaultID: [UInt8], vault: Vault) throws {
        try self.init(directory: base + "/" + Hex.encode(vaultID), present: { try vault.presence(ofPack: $0) },
                      repacked: { try vault.dropsAsAnotherUser() ? [:] : RepackNotes.kept(vault, key: $0) })
    }

    /// Opens (or makes) the cache in `directory`; `present` says which
    /// packs are still there (the local vault's, or a remote's listing for
    /// `backup --to`), and `repacked` (asked once, if a pack is gone) what
    /// repacks of gone packs kept: their pieces in those ranges stay known.
    public init(directory: String, present: ([UInt8]) throws -> PackPresence,
                repacked: (PieceKey) throws -> [[UInt8]: RepackTable] = { _ in [:] }) throws {
        self.directory = directory
        try Vault.ensureDirectory(directory)
        try Syscall.chmod(FilePath(directory), 0o700)
        key = try Self.loadKey(directory + "/key")
        if try !loadPieces(present: present, repacked: { try repacked(self.key) }) { try rewritePieces() }
    }

    /// The key of the cache in `directory` (made, with the directory, on
    /// first use): what a `backup --to` host needs before it opens the
    /// cache, to name the owner's record for it (HostRecord).
    public static func pieceKey(directory: String) throws -> PieceKey {
        try Vault.ensureDirectory(directory)
        try Syscall.chmod(FilePath(directory), 0o700)
        return try loadKey(directory + "/key")
    }

    /// The cache's key, made on first use. Never replaced once there: two
    /// first backups at once both end up with the one that landed first
    /// (a rename that does not replace), so neither records pieces under a
    /// key the other's file list then points into.
    private static func loadKey(_ path: String) throws -> PieceKey {
        func read() throws -> PieceKey? {
            guard var bytes = try? VaultDirectory.readFile(path, limit: PieceKey.length), bytes.count == PieceKey.length else { return nil }
            return try PieceKey(secret: SecretBytes(consuming: &bytes))
        }
        if let key = try read() { return key }
        let key = try PieceKey.random()
        let temp = path + ".new-\(Syscall.processID)"
        try? Syscall.unlink(temp)
        let file = try FileHandleFD(creating: temp)
        try key.secret.withUnsafeBytes { try file.write($0) }
        try file.sync()
        do { try Syscall.renameNoReplace(temp, path) } catch let error as SystemError where error.errno == .fileExists {
            try? Syscall.unlink(temp)
            // A damaged key (not 32 bytes) is replaced; the pieces it named are then never matched.
            if let other = try read() { return other }
            try Syscall.rename(temp, path)
        }
        return key
    }

    /// Reads the pieces log; false if part of it was dropped (a torn or
    /// damaged block, or packs no longer there), so it should be rewritten.
    /// A pack only unconfirmed leaves the log as it is (true): rewriting it
    /// from what is in use would drop that pack's pieces for good.
    private func loadPieces(present: ([UInt8]) throws -> PackPresence, repacked: () throws -> [[UInt8]: RepackTable]) throws -> Bool {
        guard let file = try? VaultDirectory.readFile(piecesPath, limit: Self.maxLength) else { return false }
        var r = ByteReader(file)
        guard (try? r.expect(Self.magic)) != nil else { return false }
        var clean = true
        while !r.isAtEnd {
            guard let block = try? readBlock(&r) else { clean = false; break }
            for (pack, record) in block { add(record, pack: pack) }
        }
        var keep = [Bool](repeating: true, count: packs.count)
        var tables: [[UInt8]: RepackTable]?
        var partly: [Int: RepackTable] = [:]
        for (i, p) in packs.enumerated() {
            switch try present(p) {
            case .present: continue
            case .gone:
                if tables == nil { tables = try repacked() }
                if let t = tables?[p] { partly[i] = t; continue }
                clean = false
            case .unknown: unconfirmedPacks += 1
            }
            keep[i] = false
        }
        if keep.contains(false) || !partly.isEmpty {
            let before = pieces.count - pieces.values.count { !keep[Int($0.pack)] }
            pieces = pieces.filter { _, l in
                keep[Int(l.pack)] && (partly[Int(l.pack)].map { $0.place(l.offset, UInt64(l.stored)) != nil } ?? true)
            }
            // Pieces a repack did not keep were dropped: the log is rewritten
            // without them (the kept ones stay under their pack's id).
            if pieces.count < before { clean = false }
        }
        return clean || unconfirmedPacks > 0
    }

    /// Forgets the pieces of `gone` (packs a prune removed while a backup
    /// used them): the log is rewritten without them.
    public func forget(packs gone: [[UInt8]]) throws {
        let drop = Set(gone.compactMap { packIndex[$0] })
        guard !drop.isEmpty else { return }
        pieces = pieces.filter { !drop.contains($0.value.pack) }
        if unconfirmedPacks == 0 { try rewritePieces() }
    }

    private func readBlock(_ r: inout ByteReader) throws -> [([UInt8], Record)] {
        let start = r
        let count = Int(try r.u32())
        guard count <= r.remaining / Self.recordLength else { throw BackupError.invalidCache }
        var records: [([UInt8], Record)] = []
        for _ in 0..<count {
            let id = try PieceID(r.bytes(32)), pack = try r.bytes(16)
            let record = Record(id: id, offset: try r.u64(), count: try r.u32(), stored: try r.u32())
            guard record.stored <= record.count else { throw BackupError.invalidCache }
            records.append((pack, record))
        }
        var body = start
        let covered = try body.bytes(4 + count * Self.recordLength)
        guard try r.bytes(16) == Array(try SHA256.hash(covered).prefix(16)) else { throw BackupError.invalidCache }
        return records
    }

    private func add(_ record: Record, pack: [UInt8]) {
        let index: UInt32
        if let i = packIndex[pack] { index = i } else {
            index = UInt32(packs.count)
            packs.append(pack)
            packIndex[pack] = index
        }
        pieces[record.id] = Location(pack: index, offset: record.offset, count: record.count, stored: record.stored)
    }

    private static func block(_ records: [([UInt8], Record)]) throws -> [UInt8] {
        var w = ByteWriter(capacity: 4 + records.count * recordLength + 16)
        w.u32(UInt32(records.count))
        for (pack, r) in records {
            r.id.encode(into: &w); w.bytes(pack); w.u64(r.offset); w.u32(r.count); w.u32(r.stored)
        }
        let sum = try SHA256.hash(w.bytes).prefix(16)
        w.bytes(sum)
        return w.bytes
    }

    /// The whole log anew (atomic replace), from what is in memory.
    private func rewritePieces() throws {
        var out = Self.magic
        let records = pieces.map { (packs[Int($0.value.pack)], Record(id: $0.key, offset: $0.value.offset, count: $0.value.count, stored: $0.value.stored)) }
        for start in stride(from: 0, to: records.count, by: 65536) {
            out += try Self.block(Array(records[start..<min(records.count, start + 65536)]))
        }
        try VaultDirectory.atomicWrite(out, to: piecesPath, mode: 0o600)
    }

    /// Where a piece this host stored is, if it is still there.
    public func reference(_ id: PieceID) -> PieceRef? {
        pieces[id].map { PieceRef(pack: packs[Int($0.pack)], offset: $0.offset, count: $0.count, stored: $0.stored, id: id) }
    }

    /// Whether `ref` is a piece this host stored, exactly there.
    public func knows(_ ref: PieceRef) -> Bool {
        guard let l = pieces[ref.id], let p = packIndex[ref.pack] else { return false }
        return l.pack == p && l.offset == ref.offset && l.count == ref.count && l.stored == ref.stored
    }

    /// Records the pieces of a pack that has landed in the inbox: one block
    /// appended to the log and synced.
    public func record(pack: [UInt8], pieces new: [Record]) throws {
        remember(pack: pack, pieces: new)
        try log(pack: pack, pieces: new)
    }

    /// `record`'s first half: the pieces are known from now on (a caller
    /// that reads the cache from other threads holds its lock for this, and
    /// not for the disk's half).
    func remember(pack: [UInt8], pieces new: [Record]) {
        for r in new { add(r, pack: pack) }
    }

    /// `record`'s second half: the block in the log, synced.
    func log(pack: [UInt8], pieces new: [Record]) throws {
        guard !new.isEmpty else { return }
        let records = new.map { (pack, $0) }
        if !Syscall.exists(piecesPath) { return try rewritePieces() }
        let fd = try Syscall.open(FilePath(piecesPath), [.writeOnly, .noFollow, .append])
        defer { Syscall.close(fd) }
        try Syscall.writeFully(fd, try Self.block(records), path: piecesPath)
        try Syscall.fsync(fd, path: piecesPath)
    }

    /// The file of the last snapshot's file list for this host and paths.
    public func fileListPath(host: String, paths: [[UInt8]]) throws -> String {
        var w = ByteWriter(Array(host.utf8))
        for p in paths { w.u8(0); w.bytes(p) }
        return directory + "/files-" + Hex.encode(Array(try SHA256.hash(w.bytes).prefix(8)))
    }
}

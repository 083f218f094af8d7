// The only file that imports libarchive. Three handles, each a final class
// that frees its `struct archive` in deinit: `PaxWriter` (pax restricted to a
// ByteSink), `TarReader` (tar/pax only, no filters, from a ByteStream) and
// `DiskWriter` (archive_write_disk with the secure options). Every libarchive
// return code passes through `LibArchiveHandle.check`, the one place that
// turns a failure into an `ArchiveError` (or rethrows what the sink or stream
// threw inside a callback). Callbacks reach Swift through an Unmanaged box;
// the only pointer libarchive keeps beyond one call is the reader box's own
// 64 KiB buffer, which lives exactly as long as the reader.
//
// Names and link targets are raw bytes (Linux file names need not be UTF-8)
// and go through libarchive's locale ("multibyte") form: in the C locale
// libarchive stores non-ASCII names with hdrcharset=BINARY and reads UTF-8
// pax names back byte for byte, with ARCHIVE_WARN in both cases, which is
// why WARN is not a failure here. The *_utf8 setters are not used: in the C
// locale libarchive 3.6's pax writer crashes on names set that way.
internal import CArchive
#if canImport(Glibc)
internal import Glibc   // strlen, ENOMEM
#endif
import System

/// The parts of a tar header this layer keeps. Everything else a header can
/// carry (owner ids and names, xattrs, ACLs, file flags, atime, sparse maps)
/// is dropped on read and never written.
struct PaxEntry {
    enum Kind: Equatable {
        case regular, directory, symlink
        /// A hard link to `linkTarget`, an earlier entry of the same archive.
        case hardlink
        /// A device, FIFO, socket or unknown type.
        case special(ArchiveError.SpecialType)
    }

    var path: [UInt8]
    var kind: Kind
    /// The symlink's or hard link's target; empty otherwise.
    var linkTarget: [UInt8] = []
    /// Data bytes (regular files only).
    var size: UInt64 = 0
    /// Permission bits (the low 12 bits of the mode).
    var permissions: UInt32 = 0o644
    var mtime: (seconds: Int64, nanoseconds: Int)? = nil
    /// Owner ids, written only by exports (ExportArchive); folder items
    /// never record an owner (0 and 0).
    var owner: (user: UInt32, group: UInt32)? = nil
    /// Extended attributes (ACLs as Linux's `system.posix_acl_*` values),
    /// in the archive as pax `LIBARCHIVE.xattr.*` records.
    var attributes: [(name: [UInt8], value: [UInt8])] = []

    /// The path for messages (invalid UTF-8 shown as U+FFFD).
    var displayPath: String { String(decoding: path, as: UTF8.self) }
}

// File-type values of archive_entry.h (AE_IFREG …); the macros carry a cast
// and do not import into Swift.
private let typeMask: UInt32 = 0o170000
private let typeRegular: UInt32 = 0o100000
private let typeDirectory: UInt32 = 0o040000
private let typeSymlink: UInt32 = 0o120000
private let specialTypes: [UInt32: ArchiveError.SpecialType] = [
    0o020000: .characterDevice, 0o060000: .blockDevice,
    0o010000: .fifo, 0o140000: .socket,
]

/// Owner of one `struct archive`; the error chokepoint for all three kinds.
class LibArchiveHandle {
    fileprivate let a: OpaquePointer

    fileprivate init(_ a: OpaquePointer?, _ function: String) throws {
        guard let a else {
            throw ArchiveError.library(function: function, code: Int(ARCHIVE_FATAL), errno: ENOMEM, message: "out of memory")
        }
        self.a = a
    }

    deinit { archive_free(a) }

    /// What a sink or stream threw inside a callback, to rethrow as is.
    fileprivate var callbackError: Error? { nil }

    /// OK, EOF, WARN and non-negative byte counts pass; anything else becomes
    /// the callback's own error if one is pending, else `ArchiveError.library`
    /// with libarchive's code, errno and message.
    @discardableResult
    fileprivate func check<T: BinaryInteger>(_ rc: T, _ function: String) throws -> T {
        if rc >= 0 || rc == T(ARCHIVE_WARN) { return rc }
        if let e = callbackError { throw e }
        throw ArchiveError.library(function: function, code: Int(rc), errno: archive_errno(a), message: message)
    }

    fileprivate var message: String {
        archive_error_string(a).map { String(cString: $0) } ?? "unknown error"
    }
}

/// One archive_entry, freed in deinit.
private final class EntryHandle {
    let e: OpaquePointer

    init() throws {
        guard let e = archive_entry_new() else {
            throw ArchiveError.library(function: "archive_entry_new", code: Int(ARCHIVE_FATAL), errno: ENOMEM, message: "out of memory")
        }
        self.e = e
    }

    deinit { archive_entry_free(e) }

    /// A fresh entry holding exactly the fields of `entry` that are written:
    /// no owner (uid and gid 0, no names), no atime, no extended attributes.
    convenience init(_ entry: PaxEntry) throws {
        try self.init()
        withCString(entry.path) { archive_entry_copy_pathname(e, $0) }
        archive_entry_set_uid(e, Int64(entry.owner?.user ?? 0))
        archive_entry_set_gid(e, Int64(entry.owner?.group ?? 0))
        archive_entry_set_perm(e, entry.permissions & 0o7777)
        if let t = entry.mtime { archive_entry_set_mtime(e, Int(t.seconds), t.nanoseconds) }
        for a in entry.attributes {
            withCString(a.name) { name in a.value.withUnsafeBytes { archive_entry_xattr_add_entry(e, name, $0.baseAddress, $0.count) } }
        }
        switch entry.kind {
        case .regular:
            archive_entry_set_filetype(e, typeRegular)
            archive_entry_set_size(e, Int64(entry.size))
        case .directory:
            archive_entry_set_filetype(e, typeDirectory)
            archive_entry_set_size(e, 0)
        case .symlink:
            archive_entry_set_filetype(e, typeSymlink)
            archive_entry_set_size(e, 0)
            withCString(entry.linkTarget) { archive_entry_copy_symlink(e, $0) }
        case .hardlink:
            // Never with data: a pax hard link carrying data would rewrite its target.
            archive_entry_set_filetype(e, typeRegular)
            archive_entry_set_size(e, 0)
            withCString(entry.linkTarget) { archive_entry_copy_hardlink(e, $0) }
        case .special:
            preconditionFailure("special files are never written")
        }
    }
}

/// The kept fields of an entry libarchive read (owned by the reader).
private func readEntry(_ e: OpaquePointer) -> PaxEntry {
    let path = bytes(archive_entry_pathname(e) ?? archive_entry_pathname_utf8(e))
    let mode = UInt32(archive_entry_filetype(e)) & typeMask
    var out = PaxEntry(path: path, kind: .regular)
    if let hardlink = archive_entry_hardlink(e) ?? archive_entry_hardlink_utf8(e) {
        out.kind = .hardlink
        out.linkTarget = bytes(hardlink)
    } else {
        switch mode {
        case typeRegular: out.kind = .regular
        case typeDirectory: out.kind = .directory
        case typeSymlink:
            out.kind = .symlink
            out.linkTarget = bytes(archive_entry_symlink(e) ?? archive_entry_symlink_utf8(e))
        default:
            out.kind = .special(specialTypes[mode] ?? .unknown(mode: mode))
        }
    }
    if out.kind == .regular, archive_entry_size_is_set(e) != 0 {
        out.size = UInt64(max(0, archive_entry_size(e)))
    }
    out.permissions = UInt32(archive_entry_perm(e)) & 0o7777
    // Bounded as a tree's are: at most 4096, names 1 to 255 bytes, values
    // of at most 64 KiB; anything else in a hostile archive is dropped.
    if archive_entry_xattr_reset(e) > 0 {
        var name: UnsafePointer<CChar>?, value: UnsafeRawPointer?, size = 0
        while out.attributes.count < 4096, archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK {
            let n = bytes(name)
            guard !n.isEmpty, n.count <= 255, size <= 65_536 else { continue }
            out.attributes.append((n, size == 0 || value == nil ? [] : Array(UnsafeRawBufferPointer(start: value, count: size))))
        }
    }
    if archive_entry_mtime_is_set(e) != 0 {
        out.mtime = (Int64(archive_entry_mtime(e)), archive_entry_mtime_nsec(e))
    }
    return out
}

private func bytes(_ s: UnsafePointer<CChar>?) -> [UInt8] {
    guard let s else { return [] }
    return Array(UnsafeRawBufferPointer(start: s, count: strlen(s)))
}

/// Calls `body` with `bytes` as a NUL-terminated C string.
private func withCString<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
    try (bytes + [0]).withUnsafeBufferPointer { buffer in
        try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
    }
}

// MARK: - Writing a pax stream

private final class SinkBox {
    let sink: ByteSink
    var error: Error?
    /// Set once the writer is abandoned: the padding libarchive flushes while
    /// it is freed must not reach a sink the caller is about to discard.
    var discard = false
    init(_ sink: ByteSink) { self.sink = sink }
}

/// A pax (restricted) stream written to a ByteSink in 10240-byte records,
/// the standard tar blocking, so `tar -t` reads it without complaint; or,
/// with `zip`, a zip stream (deflated entries, each with its sizes and CRC
/// in a data descriptor after its data: the sink is never sought).
final class PaxWriter: LibArchiveHandle {
    private let box: SinkBox
    private var closed = false

    override fileprivate var callbackError: Error? { box.error }

    init(sink: ByteSink, zip: Bool = false) throws {
        box = SinkBox(sink)
        try super.init(archive_write_new(), "archive_write_new")
        if zip {
            try check(archive_write_set_format_zip(a), "archive_write_set_format_zip")
            try check(archive_write_set_bytes_per_block(a, 0), "archive_write_set_bytes_per_block")
        } else {
            try check(archive_write_set_format_pax_restricted(a), "archive_write_set_format_pax_restricted")
            try check(archive_write_set_bytes_per_block(a, 10240), "archive_write_set_bytes_per_block")
        }
        let client = Unmanaged.passUnretained(box).toOpaque()
        try check(archive_write_open2(a, client, nil, { _, client, buffer, count in
            let box = Unmanaged<SinkBox>.fromOpaque(client!).takeUnretainedValue()
            if box.discard { return -1 }
            do {
                try box.sink.write(UnsafeRawBufferPointer(start: buffer, count: count))
                return count
            } catch {
                box.error = error
                return -1
            }
        }, nil, nil), "archive_write_open2")
    }

    deinit { if !closed { box.discard = true } }

    func writeHeader(_ entry: PaxEntry) throws {
        let handle = try EntryHandle(entry)
        try check(archive_write_header(a, handle.e), "archive_write_header")
    }

    func writeData(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let n = try check(archive_write_data(a, base, bytes.count), "archive_write_data")
        guard n == bytes.count else {
            throw ArchiveError.library(function: "archive_write_data", code: Int(ARCHIVE_FATAL), errno: 0,
                                       message: "wrote \(n) of \(bytes.count) bytes")
        }
    }

    func finishEntry() throws { try check(archive_write_finish_entry(a), "archive_write_finish_entry") }

    /// Bytes of the archive stream written so far, headers and padding
    /// included: filter 0 counts what the format layer hands on, before
    /// libarchive gathers it into records. Right after `writeHeader` of a
    /// file, where that file's data starts.
    var position: UInt64 { UInt64(max(0, archive_filter_bytes(a, 0))) }

    /// Writes the end-of-archive blocks and flushes the last record.
    func close() throws {
        closed = true
        try check(archive_write_close(a), "archive_write_close")
    }
}

// MARK: - Reading a tar/pax stream

private final class StreamBox {
    static let bufferSize = 64 << 10
    /// How far past what the last header accounts for (its position, its
    /// data) libarchive may read: headers, pax records and read-ahead fit
    /// with room to spare. libarchive reads over null blocks after the end
    /// on its own, so this is what bounds the bytes an item's archive may
    /// be followed by.
    static let slack: UInt64 = 1 << 20
    let stream: ByteStream
    /// The same stream, when it lends its bytes (no copy into `buffer`).
    let lending: LendingByteStream?
    /// Owned by the box; libarchive reads from it (or from what a lending
    /// stream lent) until the next callback: libarchive copies what it still
    /// needs of a block before it asks for the next.
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamBox.bufferSize, alignment: 16)
    var error: Error?
    /// Bytes handed to libarchive so far, and how many it may have.
    var delivered: UInt64 = 0, allowed: UInt64 = StreamBox.slack
    init(_ stream: ByteStream) { (self.stream, lending) = (stream, stream as? LendingByteStream) }
    deinit { buffer.deallocate() }
}

/// Tar in its ustar, pax and GNU dialects, uncompressed (the vault compresses
/// by itself), pulled from a ByteStream.
final class TarReader: LibArchiveHandle {
    private let box: StreamBox

    override fileprivate var callbackError: Error? { box.error }

    init(stream: ByteStream) throws {
        box = StreamBox(stream)
        try super.init(archive_read_new(), "archive_read_new")
        try check(archive_read_support_format_tar(a), "archive_read_support_format_tar")
        let client = Unmanaged.passUnretained(box).toOpaque()
        try check(archive_read_open(a, client, nil, { _, client, out in
            let box = Unmanaged<StreamBox>.fromOpaque(client!).takeUnretainedValue()
            do {
                // Blocks of the same size either way: `allowed` bounds what
                // is read ahead by whole blocks.
                let block: UnsafeRawBufferPointer
                if let lending = box.lending {
                    block = try lending.lend(upTo: StreamBox.bufferSize)
                } else {
                    block = UnsafeRawBufferPointer(rebasing: box.buffer[..<(try box.stream.read(into: box.buffer))])
                }
                box.delivered += UInt64(block.count)
                guard box.delivered <= box.allowed else { throw ArchiveError.trailingData }
                out?.pointee = block.baseAddress ?? UnsafeRawPointer(box.buffer.baseAddress)
                return block.count
            } catch {
                box.error = error
                return -1
            }
        }, nil), "archive_read_open")
    }

    /// The next entry's header, or nil at the end of the archive.
    func next() throws -> PaxEntry? {
        var e: OpaquePointer?
        let rc = try check(archive_read_next_header(a, &e), "archive_read_next_header")
        if rc == ARCHIVE_EOF { return nil }
        guard let e else {
            throw ArchiveError.library(function: "archive_read_next_header", code: Int(rc), errno: 0, message: "no entry")
        }
        let entry = readEntry(e)   // the entry belongs to the reader: read, not freed
        // This entry's header and data, and the slack, may be read; no more.
        let (end, overflow) = headerPosition.addingReportingOverflow(entry.size)
        box.allowed = overflow ? .max : end &+ 1024 &+ StreamBox.slack
        return entry
    }

    /// Where in the stream the header `next` last read (or the end-of-archive
    /// marker) starts: archive_read_header_position.
    var headerPosition: UInt64 { UInt64(max(0, archive_read_header_position(a))) }

    /// Copies the current entry's data blocks (holes included) into `disk`.
    func copyData(to disk: DiskWriter, stop: StopRequest? = nil) throws {
        var block: UnsafeRawPointer?
        var size = 0
        var offset: la_int64_t = 0
        while true {
            try stop?.checkpoint()
            let rc = try check(archive_read_data_block(a, &block, &size, &offset), "archive_read_data_block")
            if rc == ARCHIVE_EOF { return }
            guard size > 0, let block else { continue }
            try disk.check(archive_write_data_block(disk.a, block, size, offset), "archive_write_data_block")
        }
    }

    /// Reads the stream to its end, so the layer below sees all of it (an
    /// authenticated stream checks its final chunk only when it is reached).
    /// After the archive's end only the zeros a tar writer pads its last
    /// record with may follow (vault writes records of 10,240 bytes): more,
    /// or anything else, is refused, so a small item cannot decode to an
    /// archive followed by gigabytes that `get` would write out.
    func drainInput() throws {
        var left = Self.maxTrailingPadding
        while true {
            let n = try box.stream.read(into: box.buffer)
            if n == 0 { return }
            guard n <= left, UnsafeRawBufferPointer(rebasing: box.buffer[..<n]).allSatisfy({ $0 == 0 }) else {
                throw ArchiveError.trailingData
            }
            left -= n
        }
    }

    /// The most zero bytes that may follow an archive's end: one record.
    static let maxTrailingPadding = 10_240
}

// MARK: - Writing to disk

/// archive_write_disk with the secure options: no `..` (SECURE_NODOTDOT),
/// never through a symlink (SECURE_SYMLINKS), nothing overwritten
/// (NO_OVERWRITE), permissions and mtimes restored, owners, ACLs, xattrs and
/// file flags not. SECURE_NOABSOLUTEPATHS is left out only because every
/// path handed here is the caller's checked relative path under an absolute,
/// symlink-free root; FolderArchive refuses absolute paths before that.
final class DiskWriter: LibArchiveHandle {
    static let flags: Int32 = ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_NO_OVERWRITE
        | ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT

    /// Removed from libarchive's messages, which name the full path.
    private let root: String

    init(root: String) throws {
        self.root = root
        try super.init(archive_write_disk_new(), "archive_write_disk_new")
        try check(archive_write_disk_set_options(a, DiskWriter.flags), "archive_write_disk_set_options")
    }

    /// Creates `entry` (its paths already absolute under the root). A refusal
    /// or failure is reported against `name`, the entry's archive path.
    func writeHeader(_ entry: PaxEntry, name: String) throws {
        let handle = try EntryHandle(entry)
        let rc = archive_write_header(a, handle.e)
        if rc == ARCHIVE_FAILED {
            throw ArchiveError.refused(entry: name, reason: .library(removing(root + "/", from: message)))
        }
        try check(rc, "archive_write_header")
    }

    /// Closes the entry's file; directory modes and times wait for `close`.
    func finishEntry() throws { try check(archive_write_finish_entry(a), "archive_write_finish_entry") }

    /// Applies the deferred directory modes and times (deepest first).
    func close() throws { try check(archive_write_close(a), "archive_write_close") }
}

/// `message` without the extraction root, so refusals name archive paths.
private func removing(_ prefix: String, from message: String) -> String {
    let p = Array(prefix.utf8), m = Array(message.utf8)
    guard !p.isEmpty else { return message }
    var out: [UInt8] = [], i = 0
    while i < m.count {
        if m.count - i >= p.count, m[i..<i + p.count].elementsEqual(p) { i += p.count } else { out.append(m[i]); i += 1 }
    }
    return String(decoding: out, as: UTF8.self)
}

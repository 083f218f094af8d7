import System

/// A tar (pax) or zip archive streamed to a sink: what `vault snapshots
/// dump --archive` writes (restic's `dump --archive`, borg's `export-tar`).
/// Unlike a folder item's pax stream, an export keeps the owner ids; hard
/// links are links in a tar and whole files again in a zip, which has none;
/// extended attributes and ACLs go in a tar's pax records.
/// The writer is libarchive's (LibArchive.swift).
public final class ExportArchive {
    public enum Format: String, Sendable, CaseIterable { case tar, zip }

    public enum Kind: Sendable, Equatable { case file, directory, symlink(target: [UInt8]), hardlink(to: [UInt8]) }

    public struct Entry: Sendable {
        public var path: [UInt8]
        public var kind: Kind
        public var size: UInt64
        public var permissions: UInt32
        public var modified: (seconds: Int64, nanoseconds: Int)
        public var user: UInt32, group: UInt32
        /// Extended attributes (a tar's pax xattr records; a zip has none).
        public var attributes: [(name: [UInt8], value: [UInt8])] = []
        public init(path: [UInt8], kind: Kind, size: UInt64, permissions: UInt32, modified: (seconds: Int64, nanoseconds: Int),
                    user: UInt32, group: UInt32) {
            (self.path, self.kind, self.size, self.permissions, self.modified, self.user, self.group) =
                (path, kind, size, permissions, modified, user, group)
        }
    }

    public let format: Format
    private let writer: PaxWriter
    /// Data bytes the open entry still owes (a file's size), or nil.
    private var owed: UInt64?

    public init(format: Format, to sink: ByteSink) throws {
        self.format = format
        writer = try PaxWriter(sink: sink, zip: format == .zip)
    }

    /// Starts an entry; a file's data follows through `write`, exactly
    /// `size` bytes, then `finish`.
    public func begin(_ entry: Entry) throws {
        precondition(owed == nil, "an entry is still open")
        var e = PaxEntry(path: entry.path, kind: .regular)
        switch entry.kind {
        case .file: e.size = entry.size
        case .directory: e.kind = .directory
        case .symlink(let target): (e.kind, e.linkTarget) = (.symlink, target)
        case .hardlink(let to): (e.kind, e.linkTarget) = (.hardlink, to)
        }
        e.permissions = entry.permissions & 0o7777
        e.mtime = entry.modified
        e.owner = (entry.user, entry.group)
        if format == .tar { e.attributes = entry.attributes }
        try writer.writeHeader(e)
        owed = e.kind == .regular ? e.size : 0
    }

    /// A file's data. More than its size is refused: the archive's framing
    /// would not hold it.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let left = owed, UInt64(bytes.count) <= left else { throw ExportError.sizeDisagrees }
        try writer.writeData(bytes)
        owed = left - UInt64(bytes.count)
    }

    /// Ends the entry; fewer bytes than its size are refused (libarchive
    /// would pad them with zeros, an export that lies).
    public func finish() throws {
        guard owed == 0 else { throw ExportError.sizeDisagrees }
        owed = nil
        try writer.finishEntry()
    }

    public func close() throws { try writer.close() }

    public enum ExportError: Error, Equatable { case sizeDisagrees }
}

import System
import VaultCodecs

/// One file inside a folder item, named as the item's name, '/', and the
/// file's path in the folder ("Documents/notes/big-log.txt"). Item names
/// never hold '/' (ManifestEntry.checkName), so the first '/' ends the
/// item's name; an exact item name is still looked up first, so a name
/// always means its item.
///
/// The file is found with the folder's index (FolderIndex, as `vault mount`
/// finds it: one pass through the archive, writing nothing), then its bytes
/// are read from where they lie in the archive: for an item stored without
/// compression only the chunks that cover them are decrypted again; a
/// compressed one is decoded from its start up to them.
public struct FolderFile: Sendable {
    public let folder: ManifestEntry
    /// The path inside the folder, as given ("notes/big-log.txt").
    public let path: String
    public let size: UInt64
    public let permissions: UInt32
    public let modified: Int64
    let offset: UInt64

    /// ("Documents", "notes/big-log.txt") for "Documents/notes/big-log.txt";
    /// nil when `spec` has no '/' with something on both sides of it.
    public static func split(_ spec: String) -> (item: String, path: String)? {
        guard let slash = spec.firstIndex(of: "/") else { return nil }
        let item = String(spec[..<slash]), path = String(spec[spec.index(after: slash)...])
        guard !item.isEmpty, path.split(separator: "/").contains(where: { !$0.isEmpty }) else { return nil }
        return (item, path)
    }
}

/// A directory inside a folder item, for `restore FOLDER/PATH`.
public struct FolderDirectory: Sendable {
    public let folder: ManifestEntry
    public let path: String
    public let permissions: UInt32
    public let modified: Int64
}

/// What FOLDER/PATH names: a file to write, or a directory to restore.
public enum FolderPathTarget: Sendable {
    case file(FolderFile)
    case directory(FolderDirectory)
}

extension UnlockedVault {
    /// The file or directory at `path` in folder item `folder` (any
    /// version), found with its index. A path that names nothing there is
    /// `noSuchFileInFolder`, a symbolic link an error that says so; a
    /// damaged archive is the item's damage.
    public func target(at path: String, in folder: ManifestEntry) throws -> FolderPathTarget {
        guard folder.kind == .folder else { throw VaultError.noSuchFileInFolder(folder: folder.name, path: path) }
        let parts = path.split(separator: "/").map { Array($0.utf8) }
        guard let e = try index(folder: folder).entries.first(where: { $0.path.split(separator: UInt8(ascii: "/")).map(Array.init) == parts }) else {
            throw VaultError.noSuchFileInFolder(folder: folder.name, path: path)
        }
        switch e.kind {
        case .file:
            return .file(FolderFile(folder: folder, path: path, size: e.size, permissions: e.permissions, modified: e.mtime,
                                    offset: e.dataOffset))
        case .directory:
            return .directory(FolderDirectory(folder: folder, path: path, permissions: e.permissions, modified: e.mtime))
        case .symlink:
            throw VaultError.notAFileInFolder(folder: folder.name, path: path, kind: .symbolicLink)
        }
    }

    /// The regular file at `path` in folder item `folder` (`target`; a
    /// directory is an error that says to restore it).
    public func file(at path: String, in folder: ManifestEntry) throws -> FolderFile {
        switch try target(at: path, in: folder) {
        case .file(let file): return file
        case .directory:
            throw VaultError.notAFileInFolder(folder: folder.name, path: path, kind: .directory)
        }
    }

    /// Writes the file's bytes to `sink`: exactly `size` of them, each from
    /// a chunk authenticated as it is read.
    public func read(_ file: FolderFile, to sink: ByteSink) throws {
        let content = try open(file.folder).randomAccess(readingAheadUntil: file.offset + file.size)
        let buffer = try PageBuffer(count: ItemCipher.chunkSize)
        var done: UInt64 = 0
        while done < file.size {
            let want = Int(min(UInt64(buffer.raw.count), file.size - done))
            let n = try content.read(at: file.offset + done, into: UnsafeMutableRawBufferPointer(rebasing: buffer.raw[..<want]))
            guard n > 0 else { throw VaultError.itemCorrupted(name: file.folder.name) }   // the archive ended inside the file
            try sink.write(UnsafeRawBufferPointer(rebasing: buffer.raw[..<n]))
            done += UInt64(n)
        }
    }

    /// Writes the file to a new file at `path` (never over one), with its
    /// permissions and modification time (NewPlaintextFile).
    public func exportFile(_ file: FolderFile, to path: String, partials: PartialOutputs? = nil,
                       progress: ((UInt64) -> Void)? = nil, partial: ((String) -> Void)? = nil) throws {
        let out = try NewPlaintextFile(at: path, partials: partials)
        if let p = out.partialPath { partial?(p) }
        try read(file, to: progress.map { ProgressSink(out.file, report: $0) } ?? out.file)
        try out.commit()
        // Best effort: the content is whole and named; a mode or time the target cannot take leaves the private default.
        try? Syscall.setModeAndTime(path, mode: UInt16(file.permissions & 0o777), modified: file.modified)
    }
}

import System
import VaultCodecs

/// An open file descriptor, owned: closed on deinit.
public final class FileHandleFD: ByteSink, ByteSource {
    public let fd: Int32
    public let size: UInt64
    /// Whether the descriptor is a regular file (so `size` is its length).
    public private(set) var isRegularFile = false
    /// The path, for messages ("cannot write '…': no space left on device").
    public let path: String?
    private let owned: Bool

    /// Opens `path` read-only. Vault files are never opened through a
    /// symbolic link and must be regular files: they are opened without
    /// blocking (a FIFO planted in the inbox must not hang an unlock that
    /// holds the writer lock) and anything else is refused. A user's input
    /// (`vault add LINK`, `vault add <(cmd)`) may be a link or a pipe.
    public init(readingFrom path: some FilePathRepresentable, followSymlinks: Bool = false) throws {
        fd = try Syscall.open(path, followSymlinks ? .readOnly : [.noFollow, .nonBlocking])
        owned = true
        self.path = path.filePath.description
        do {
            let st = try Syscall.status(fd)
            isRegularFile = st.kind == .regular
            if !followSymlinks, !isRegularFile { throw VaultError.unsafeVaultPath(path.filePath.description) }
            size = st.size
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    /// Wraps a descriptor this object does not own (stdin, stdout).
    public init(borrowing fd: Int32) {
        self.fd = fd
        owned = false
        path = nil
        size = (try? Syscall.status(fd).size) ?? 0   // a hint for a borrowed descriptor (a pipe has none); nothing decides on it
    }

    /// What `path` is, following symbolic links, without opening it (opening
    /// a FIFO would block): nil if it does not exist.
    public static func kind(of path: String) throws -> (regular: Bool, directory: Bool)? {
        guard let st = try Syscall.status(of: path, followLinks: true) else { return nil }
        return (st.kind == .regular, st.kind == .directory)
    }

    /// Opens a file the user named that must be a regular file (a key file,
    /// a recovery kit), following symbolic links (it is the user's path).
    /// Opened with O_NONBLOCK, so that open itself cannot hang on a FIFO
    /// with no writer, then refused unless fstat says regular: a FIFO, a
    /// device, a socket or a directory is never read (a read would wait for
    /// a writer forever, or never end). O_NONBLOCK stays set; it changes
    /// nothing for a regular file. `what` names the file in the error.
    public static func regularFile(_ path: String, what: UserFile) throws -> FileHandleFD {
        let file = FileHandleFD(owning: try Syscall.open(path, .nonBlocking), path: path)
        let kind = try Syscall.status(file.fd).kind
        guard kind == .regular else {
            throw VaultError.notARegularFile(path: path, what: what, kind: kind)
        }
        file.isRegularFile = true
        return file
    }

    /// Takes ownership of an open descriptor (of the file at `path`).
    public init(owning fd: Int32, path: String?) {
        self.fd = fd
        self.path = path
        owned = true
        size = (try? Syscall.status(fd).size) ?? 0   // informational: every caller that decides on kind or length calls fstat again
    }

    /// Creates `path` exclusively (never over an existing file), mode 0600.
    public init(creating path: String) throws {
        fd = try Syscall.open(path, [.writeOnly, .create, .exclusive, .noFollow])
        owned = true
        self.path = path
        size = 0
    }

    deinit { if owned { Syscall.close(fd) } }

    /// Writes in pieces of at most `writeSize`: on this project's virtual
    /// machines one 4-16 MiB write(2) into the page cache costs 2-9 times
    /// what the same bytes cost in 256 KiB writes (dd, and make bench's
    /// move and add figures).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var at = 0
        while at < bytes.count {
            let n = min(Self.writeSize, bytes.count - at)
            try Syscall.writeFully(fd, UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)]), path: path)
            at += n
        }
        written += UInt64(bytes.count)
        // A file that will be fsync'ed anyway: start writing it back every
        // 32 MiB, so the disk works while we encrypt and the final fsync has
        // little left to do.
        if startsWriteback, written - writebackStart >= 32 << 20 {
            Syscall.startWriteback(fd, from: writebackStart, count: written - writebackStart)
            writebackStart = written
        }
    }

    static let writeSize = 256 << 10

    /// A file written whole that waits for a later sync (a group's
    /// syncfs): what it has not handed to the disk yet goes now, when that
    /// is at least `Syscall.writebackFrom` bytes.
    package func startWritebackOfRest() {
        guard written - writebackStart >= Syscall.writebackFrom else { return }
        Syscall.startWriteback(fd, from: writebackStart, count: 0)
        writebackStart = written
    }

    /// Set for files that are fsync'ed when complete (TempFile).
    package var startsWriteback = false
    private var written: UInt64 = 0
    private var writebackStart: UInt64 = 0

    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try Syscall.preadFully(fd, buffer, at: offset, path: path)
    }

    /// Sequential read until the buffer is full or end of input.
    public func readSequential(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try Syscall.readFully(fd, buffer, path: path)
        if let readProgress {
            bytesRead &+= UInt64(n)
            readProgress(bytesRead)
        }
        return n
    }

    /// Called with the total read so far after each sequential read: the
    /// progress of an add is the source consumed, not the padded (and
    /// perhaps compressed) bytes written, which could pass the total.
    package var readProgress: ((UInt64) -> Void)?
    private var bytesRead: UInt64 = 0

    public func sync() throws { try Syscall.fsync(fd, path: path) }

    /// fstat of the open file: (is a regular file, is a directory, permission bits, mtime).
    public func status() throws -> (regular: Bool, directory: Bool, mode: UInt16, modified: Int64) {
        let st = try Syscall.status(fd)
        return (st.kind == .regular, st.kind == .directory,
                st.permissions, st.modified)
    }
}

extension FileHandleFD {
    /// Everything left to read, at most `limit` bytes (more is an error).
    public func readAll(limit: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: limit + 1)
        let n = try out.withUnsafeMutableBytes { try readSequential(into: $0) }
        guard n <= limit else { throw VaultError.inputTooLarge(limit: limit) }
        out.removeSubrange(n...)
        return out
    }
}

extension FileHandleFD {
    /// The size of the regular file at `path` (following links), or nil.
    public static func size(of path: String) -> UInt64? {
        // A progress bar's total only: unknown is nil.
        guard let st = try? Syscall.status(of: path, followLinks: true), st.kind == .regular else { return nil }
        return UInt64(st.size)
    }
}

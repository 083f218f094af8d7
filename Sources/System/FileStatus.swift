#if canImport(Glibc)
import Glibc
#endif

/// What stat(2) says of a file, in the terms callers use.
public struct FileStatus: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case regular, directory, symlink, fifo, socket, characterDevice, blockDevice, unknown
    }

    public let kind: Kind
    /// The permission bits (st_mode & 0o7777).
    public let permissions: UInt16
    /// Bytes (0 for what has no size, such as a FIFO).
    public let size: UInt64
    /// Last modification, whole seconds since 1970, and the nanoseconds after.
    public let modified: Int64
    public let modifiedNanoseconds: Int
    /// The owner's user id.
    public let owner: UInt32
    /// What a backup compares and records (`vault backup`): the group, the
    /// device and inode (which file this is), its hard-link count, and the
    /// last status change to the nanosecond.
    public let group: UInt32
    public let device: UInt64
    public let inode: UInt64
    public let links: UInt64
    public let changed: Int64
    public let changedNanoseconds: Int

    init(_ st: stat) {
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .unknown
        }
        permissions = UInt16(st.st_mode & 0o7777)
        size = UInt64(max(0, st.st_size))
        modified = Int64(st.st_mtim.tv_sec)
        modifiedNanoseconds = Int(st.st_mtim.tv_nsec)
        owner = st.st_uid
        group = st.st_gid
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        links = UInt64(st.st_nlink)
        changed = Int64(st.st_ctim.tv_sec)
        changedNanoseconds = Int(st.st_ctim.tv_nsec)
    }

    public var isRegular: Bool { kind == .regular }
    public var isDirectory: Bool { kind == .directory }
    /// Whether users other than the owner (group or others) may write it.
    public var isWritableByOthers: Bool { permissions & 0o022 != 0 }
}

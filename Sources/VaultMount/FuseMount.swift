internal import CFuse
internal import Glibc
import Synchronization
import System
import VaultCore

/// A negative errno for a callback's return.
struct Errno32: Error { let code: Int32; init(_ code: Int32) { self.code = code } }

/// What an open file reads from: an item's content, or a snapshot's file.
protocol MountContent: AnyObject, Sendable {
    /// Fills `buffer` from `offset`; fewer bytes only at the content's end.
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension RandomAccessContent: MountContent {}

/// The `struct fuse` pointer, to hand to the thread that may unmount.
/// @unchecked: a C pointer is never Sendable. This one lives in `handle`
/// only from `fuse_mount` until `run` takes it out again (before
/// `fuse_unmount` and `fuse_destroy`), and the other thread uses it only
/// under that lock, for `fuse_exit` and `fuse_unmount`, which libfuse lets
/// any thread call.
struct FuseHandle: @unchecked Sendable { let pointer: OpaquePointer }

/// A vault mounted read-only over FUSE 3 (libfuse, high-level API). The only
/// code that calls libfuse. The loop is libfuse's multi-threaded one (at
/// most 10 callbacks at once), so one slow read (a compressed item's
/// frames walked or decoded, a folder being indexed) does not stall the
/// others: the open-file table is behind a lock, each open file serves one
/// read at a time (its own lock), and the tree locks itself. Reads decrypt
/// only the chunks they touch (RandomAccessContent), the last few kept per
/// item for all its open files and the next two opened ahead of a forward
/// reader (past a folder's file once it is read to its end: the folder's
/// next files follow in the archive), a file's first chunk from its open
/// on (unless a read reached its end before: the kernel keeps its pages);
/// listings carry offsets, so the kernel takes readdirplus entries
/// (each name with its attributes) and looks none up again; a snapshot's file reads its pieces (SnapshotFileContent), each
/// verified whole; nothing is written anywhere. A
/// chunk that fails to authenticate is EIO to the reader, never other bytes.
/// Everything an open file holds goes when its table entry does, on release.
///
/// libfuse's callbacks speak libc (struct stat, errno codes, a C argv), so
/// the little libc they need is here beside libfuse, not behind System.
public final class FuseMount: Sendable {
    public let mountpoint: String
    let tree: MountTree
    let vault: MountedVault
    let snapshots: MountedSnapshots?
    let uid = getuid(), gid = getgid()
    /// An open file: `size` bytes from `base` of an item's content (a file
    /// item's own content, or a file's place in a folder item's archive), or
    /// of a snapshot's file.
    final class OpenFile: Sendable {
        let content: Mutex<any MountContent>
        let base: UInt64, size: UInt64
        /// The tree's node, marked `readWhole` once a read reaches the end.
        let node: Int
        init(_ content: any MountContent, base: UInt64, size: UInt64, node: Int) {
            self.content = Mutex(content)
            (self.base, self.size, self.node) = (base, size, node)
        }
    }
    /// Files a read has reached the end of in this mount: the kernel keeps
    /// their pages (keep_cache; nothing changes while mounted), so opening
    /// one again reads nothing from here, and its first chunk is not
    /// decrypted ahead at open (that was most of the mount's CPU while a
    /// second `cp -r` of a folder read every file from the page cache). If
    /// the kernel did drop the pages, the first read opens the chunk itself.
    private let readWhole = Mutex<Set<Int>>([])
    /// The open files by handle, and the next handle.
    private let open = Mutex<(files: [UInt64: OpenFile], next: UInt64)>(([:], 1))
    /// The items opened last (by blob name, most recent last), shared by
    /// their open files: a folder's files read one after another open (and
    /// authenticate the final chunk of) their archive once. A few only, so
    /// descriptors stay bounded; an item dropped here stays open for as
    /// long as an open file still uses it.
    private let recentItems = Mutex<[(blob: String, item: OpenedItem)]>([])
    private static let recentItemsKept = 8
    /// The `struct fuse`, set while mounted; read by `unmount` from another thread.
    private let handle = Mutex<FuseHandle?>(nil)

    public init(vault: UnlockedVault, at mountpoint: String) {
        let mounted = MountedVault(vault)
        self.vault = mounted
        self.mountpoint = mountpoint
        snapshots = vault.snapshotEntries.isEmpty ? nil : MountedSnapshots(vault)
        tree = MountTree(manifest: vault.manifest, snapshots: snapshots) { try mounted.index(folder: $0) }
    }

    /// Mounts and serves until unmounted (`fusermount3 -u`, `unmount`).
    /// `mounted` runs once the mount is in place.
    public func run(mounted: () -> Void) throws {
        // A mount lives long and serves from several threads: its address
        // space must not grow with the load (Syscall.limitMallocArenas).
        Syscall.limitMallocArenas(2)
        // auto_unmount: fusermount3 takes the mount down even if this process is killed.
        let words = ["vault", "-o", "ro,default_permissions,noatime,auto_unmount,fsname=vault,subtype=vault"]
        var argv = words.map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var ops = Self.operations()
        let fuse: OpaquePointer? = argv.withUnsafeMutableBufferPointer { buffer in
            var args = fuse_args(argc: Int32(words.count), argv: buffer.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&args) }
            return vault_fuse_new(&args, &ops, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let fuse else { throw MountError.fuseDidNotStart }
        defer { fuse_destroy(fuse) }
        guard fuse_mount(fuse, mountpoint) == 0 else {
            throw MountError.mountFailed(mountpoint: mountpoint)
        }
        handle.withLock { $0 = FuseHandle(pointer: fuse) }
        mounted()
        _ = vault_fuse_loop_mt(fuse)
        handle.withLock { $0 = nil }
        fuse_unmount(fuse)
        open.withLock { $0.files.removeAll() }
        recentItems.withLock { $0.removeAll() }
    }

    /// Takes the mount down from another thread (a signal watcher); `run`
    /// then returns. Safe to call at any time, more than once.
    public func unmount() {
        handle.withLock { h in
            guard let fuse = h?.pointer else { return }
            fuse_exit(fuse)
            fuse_unmount(fuse)
        }
    }

    // MARK: the callbacks

    private static func current() -> FuseMount {
        Unmanaged<FuseMount>.fromOpaque(vault_fuse_private_data()!).takeUnretainedValue()
    }

    private static func path(_ p: UnsafePointer<CChar>?) -> [UInt8] {
        guard let p else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: strlen(p)))
    }

    /// S_IFDIR, S_IFREG, S_IFLNK (Glibc's constants import ambiguously).
    static let directoryType: UInt32 = 0o040000
    static let regularType: UInt32 = 0o100000
    static let symlinkType: UInt32 = 0o120000

    /// `entry` opened, or taken from the recent ones.
    private func opened(_ entry: ManifestEntry) throws -> OpenedItem {
        let blob = entry.blobName
        let hit = recentItems.withLock { recent -> OpenedItem? in
            guard let i = recent.firstIndex(where: { $0.blob == blob }) else { return nil }
            let found = recent.remove(at: i)
            recent.append(found)   // now the most recent
            return found.item
        }
        if let hit { return hit }
        // Opened outside the lock (it reads and authenticates a chunk); two
        // threads opening one item at once each keep theirs, the table one.
        let item = try vault.open(entry)
        recentItems.withLock { recent in
            if !recent.contains(where: { $0.blob == blob }) { recent.append((blob, item)) }
            if recent.count > Self.recentItemsKept { recent.removeFirst() }
        }
        return item
    }

    /// A path's node, or the errno to return.
    private func node(_ path: UnsafePointer<CChar>?) -> Result<Int, Errno32> {
        switch tree.lookup(Self.path(path)) {
        case .node(let n): .success(n)
        case .missing: .failure(Errno32(-ENOENT))
        case .failed: .failure(Errno32(-EIO))
        }
    }

    private func fill(_ st: UnsafeMutablePointer<stat>, _ node: Int) {
        memset(st, 0, MemoryLayout<stat>.size)
        // Permission bits as stored, never setuid/setgid/sticky or writable;
        // directories always readable by their owner.
        switch tree.node(node) {
        case .directory(let names, _, let modified, let ns, let permissions):
            vault_fuse_stat(st, Self.directoryType | permissions | 0o500, UInt(2 + names.count), 0, modified, modified, uid, gid)
            Self.nanoseconds(st, ns)
        case .snapshots(let modified), .unreadable(let modified):
            vault_fuse_stat(st, Self.directoryType | 0o555, 2, 0, modified, modified, uid, gid)
        case .snapshotRoot(let s):
            vault_fuse_stat(st, Self.directoryType | 0o555, 2, 0, s.start.seconds, s.start.seconds, uid, gid)
            Self.nanoseconds(st, s.start.nanoseconds)
        case .snapshotDirectory(_, _, let modified, let ns, let permissions):
            vault_fuse_stat(st, Self.directoryType | permissions | 0o500, 2, 0, modified, modified, uid, gid)
            Self.nanoseconds(st, ns)
        case .snapshotFile(_, _, _, let size, let modified, let ns, let permissions):
            vault_fuse_stat(st, Self.regularType | permissions, 1, Int64(clamping: size), modified, modified, uid, gid)
            Self.nanoseconds(st, ns)
        case .folder(let e), .broken(let e):
            vault_fuse_stat(st, Self.directoryType | 0o555, 2, 0, e.modified, e.added, uid, gid)
        case .archivedDirectory(let c, let t):
            let (modified, permissions) = c.attributes(t)
            let links = UInt(2 + c.index.tree.children(t).count)
            vault_fuse_stat(st, Self.directoryType | permissions | 0o500, links, 0, modified, modified, uid, gid)
        case .file(let e):
            vault_fuse_stat(st, Self.regularType | UInt32(e.mode & 0o555), 1, Int64(clamping: e.size), e.modified, e.added, uid, gid)
        case .archived(let item, _, let size, let permissions, let modified):
            vault_fuse_stat(st, Self.regularType | permissions, 1, Int64(clamping: size), modified, item.added, uid, gid)
        case .symlink(let target, let modified, let ns):
            vault_fuse_stat(st, Self.symlinkType | 0o777, 1, Int64(target.count), modified, modified, uid, gid)
            Self.nanoseconds(st, ns)
        }
    }

    /// A snapshot's nanoseconds, on the modification and access times.
    private static func nanoseconds(_ st: UnsafeMutablePointer<stat>, _ ns: UInt32) {
        st.pointee.st_mtim.tv_nsec = Int(ns)
        st.pointee.st_atim.tv_nsec = Int(ns)
    }

    private static func operations() -> fuse_operations {
        var ops = fuse_operations()
        ops.`init` = { conn, config in
            // Requests of up to a whole chunk (1 MiB) rather than 128 KiB:
            // max_write also sets how many pages a read may carry. Reads
            // through the page cache still come one read-ahead window at a
            // time (128 KiB; 256 KiB for a reader advising sequential access,
            // as cat and cp do): the kernel caps max_readahead at the bdi's
            // read_ahead_kb.
            conn?.pointee.max_write = 1 << 20
            conn?.pointee.max_readahead = 1 << 20
            // Nothing changes while mounted: the kernel may cache names, attributes and pages.
            config?.pointee.entry_timeout = 3600
            config?.pointee.attr_timeout = 3600
            config?.pointee.negative_timeout = 3600
            config?.pointee.kernel_cache = 1
            return vault_fuse_private_data()
        }
        ops.getattr = { path, st, _ in
            let me = FuseMount.current()
            guard let st else { return -EINVAL }
            switch me.node(path) {
            case .failure(let e): return e.code
            case .success(let node):
                me.fill(st, node)
                return 0
            }
        }
        ops.readlink = { path, buffer, size in
            let me = FuseMount.current()
            guard let buffer, size > 0, case .success(let node) = me.node(path) else { return -ENOENT }
            guard case .symlink(let target, _, _) = me.tree.node(node) else { return -EINVAL }
            let n = min(target.count, size - 1)
            target.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: n) }
            buffer[n] = 0
            return 0
        }
        ops.readdir = { path, buffer, filler, offset, _, flags in
            let me = FuseMount.current()
            guard let filler else { return -EINVAL }
            let node: Int
            switch me.node(path) {
            case .failure(let e): return e.code
            case .success(let n): node = n
            }
            switch me.tree.node(node) {
            case .directory, .archivedDirectory, .folder, .broken, .snapshots, .snapshotRoot, .snapshotDirectory, .unreadable: break
            default: return -ENOTDIR
            }
            guard let listing = me.tree.listing(node) else { return -EIO }
            // Each entry carries the offset of the one after it (".", "..",
            // then the names), so a listing is served in as many requests as
            // the kernel's buffers need; only so does libfuse send readdirplus
            // entries, which carry each name's attributes: the kernel then
            // looks none of them up again (`cp -r`, `ls -l`).
            let plus = flags.rawValue & FUSE_READDIR_PLUS.rawValue != 0
            var st = stat()
            guard offset >= 0, offset < 2 + listing.count else { return 0 }
            for i in Int(offset)..<(2 + listing.count) {
                let name = (i == 0 ? Array(".".utf8) : i == 1 ? Array("..".utf8) : listing[i - 2].name) + [0]
                let child = plus && i >= 2 ? listing[i - 2].node : nil
                if let child { me.fill(&st, child) }
                let full = name.withUnsafeBufferPointer { p in
                    p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: name.count) {
                        child == nil ? filler(buffer, $0, nil, off_t(i + 1), fuse_fill_dir_flags(0))
                                     : filler(buffer, $0, &st, off_t(i + 1), FUSE_FILL_DIR_PLUS)
                    }
                } != 0
                if full { break }   // the kernel's buffer is full: it asks again from here
            }
            return 0
        }
        ops.open = { path, fi in
            let me = FuseMount.current()
            guard let fi else { return -EINVAL }
            let node: Int
            switch me.node(path) {
            case .failure(let e): return e.code
            case .success(let n): node = n
            }
            guard fi.pointee.flags & O_ACCMODE == O_RDONLY else { return -EROFS }
            do {
                let file: OpenFile
                let again = me.readWhole.withLock { $0.contains(node) }
                switch me.tree.node(node) {
                case .file(let e):
                    file = OpenFile(try me.opened(e).randomAccess(startingAt: again ? nil : 0, readingAheadUntil: e.size),
                                    base: 0, size: e.size, node: node)
                case .archived(let e, let offset, let length, _, _):
                    file = OpenFile(try me.opened(e).randomAccess(startingAt: again ? nil : offset, readingAheadUntil: offset + length),
                                    base: offset, size: length, node: node)
                case .snapshotFile(let snapshot, let tree, let name, let size, _, _, _):
                    guard let snapshots = me.snapshots, let e = try snapshots.entry(snapshot, tree: tree, named: name),
                          e.kind == .file, e.size == size else { return -EIO }
                    file = OpenFile(SnapshotFileContent(snapshots, snapshot, e), base: 0, size: size, node: node)
                default: return -EISDIR
                }
                fi.pointee.fh = me.open.withLock { table in
                    defer { table.next += 1 }
                    table.files[table.next] = file
                    return table.next
                }
                fi.pointee.keep_cache = 1
                return 0
            } catch {
                return -EIO
            }
        }
        ops.read = { _, buffer, size, offset, fi in
            let me = FuseMount.current()
            guard let fi, let buffer, offset >= 0, let file = me.open.withLock({ $0.files[fi.pointee.fh] }) else { return -EBADF }
            guard UInt64(offset) < file.size else { return 0 }
            let count = Int(min(UInt64(min(size, 1 << 30)), file.size - UInt64(offset)))
            do {
                let target = UnsafeMutableRawBufferPointer(start: buffer, count: count)
                let n = try file.content.withLock { try $0.read(at: file.base + UInt64(offset), into: target) }
                // Short inside the file's bounds: the archive ended early.
                guard n == count else { return -EIO }
                if UInt64(offset) + UInt64(n) == file.size { _ = me.readWhole.withLock { $0.insert(file.node) } }
                return Int32(n)
            } catch {
                return -EIO
            }
        }
        ops.release = { _, fi in
            // The entry is the last reference once no read is in flight (the
            // kernel sends no release before): its reader, descriptor and
            // buffers go here; a chunk still being opened ahead frees its own.
            if let fi { _ = FuseMount.current().open.withLock { $0.files.removeValue(forKey: fi.pointee.fh) } }
            return 0
        }
        return ops
    }
}

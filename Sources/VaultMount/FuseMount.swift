internal import CFuse
internal import Glibc
import Synchronization
import System
import VaultCore

/// What an open file reads from: an item's content, or a snapshot's file.
protocol MountContent: AnyObject, Sendable {
    /// The `count` bytes from `offset` (fewer only at the content's end),
    /// held in memory for as long as the result lives.
    func bytes(at offset: UInt64, count: Int) throws -> HeldBytes
}

extension RandomAccessContent: MountContent {}

/// The session pointer, to hand to the thread that may unmount.
/// @unchecked: a C pointer is never Sendable. This one lives in `handle`
/// only from `fuse_session_mount` until `run` takes it out again (before
/// `fuse_session_unmount` and `fuse_session_destroy`), and the other thread
/// uses it only under that lock, for `fuse_session_exit` and
/// `fuse_session_unmount`, which libfuse lets any thread call.
struct FuseHandle: @unchecked Sendable { let pointer: OpaquePointer }

/// A vault mounted read-only over FUSE 3 (libfuse's low-level API). The
/// only code that calls libfuse. The kernel names nodes by number: a node
/// of the MountTree is inode node + 1 (the root is 1), for as long as the
/// mount lives (nodes are never dropped, so the kernel's forgets need no
/// answer). The loop is libfuse's multi-threaded one (at most 10 callbacks
/// at once), so one slow read (a compressed item's frames walked or
/// decoded, a folder being indexed) does not stall the others: the
/// open-file table is behind a lock, each open file serves one read at a
/// time (its own lock), and the tree locks itself. Reads decrypt only the
/// chunks they touch (RandomAccessContent), the last few kept per item for
/// all its open files and the next two opened ahead of a forward reader
/// (past a folder's file once it is read to its end: the folder's next
/// files follow in the archive), a file's first chunk from its open on
/// (unless a read reached its end before: the kernel keeps its pages); a
/// read's reply is written to the kernel straight from the decrypted chunks
/// (one copy fewer than libfuse's high-level API, which fills a buffer of
/// its own); listings carry offsets and, for readdirplus, each name's
/// attributes, so the kernel looks none up again; a snapshot's file reads
/// its pieces (SnapshotFileContent), each verified whole; nothing is
/// written anywhere. A chunk that fails to authenticate is EIO to the
/// reader, never other bytes. Everything an open file holds goes when its
/// table entry does, on release.
///
/// Two ways to a faster first read are left out (issue 45; on a 2-core
/// machine a first `cat` of 1 GiB reaches 0.65-0.8x the speed of a FUSE
/// server that does no work). Pushing the chunks decrypted ahead into the
/// kernel's page cache (FUSE_NOTIFY_STORE), so that a forward reader finds
/// them there, measured 0.63x against 0.69x without in the same run: more
/// threads handing work to each other, a core idle a third of the time.
/// Reading the ciphertext through a mapping instead of pread would save
/// its copy (an eighth of a second of CPU a GiB), but a blob truncated or
/// unreadable under the mapping raises SIGBUS, which takes the whole mount
/// down where pread returns an error that is EIO to one reader.
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
    /// The session, set while mounted; read by `unmount` from another thread.
    private let handle = Mutex<FuseHandle?>(nil)
    /// The inode number a listing gives ".." (libfuse's FUSE_UNKNOWN_INO):
    /// nodes do not know their parents.
    static let unknownInode: UInt64 = 0xffff_ffff
    /// How long the kernel may keep names, negative lookups and attributes:
    /// nothing changes while mounted.
    static let timeout: Double = 3600

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
        let session: OpaquePointer? = argv.withUnsafeMutableBufferPointer { buffer in
            var args = fuse_args(argc: Int32(words.count), argv: buffer.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&args) }
            return vault_fuse_session_new(&args, &ops, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let session else { throw MountError.fuseDidNotStart }
        defer { fuse_session_destroy(session) }
        guard fuse_session_mount(session, mountpoint) == 0 else {
            throw MountError.mountFailed(mountpoint: mountpoint)
        }
        handle.withLock { $0 = FuseHandle(pointer: session) }
        mounted()
        _ = vault_fuse_session_loop_mt(session)
        handle.withLock { $0 = nil }
        fuse_session_unmount(session)
        open.withLock { $0.files.removeAll() }
        recentItems.withLock { $0.removeAll() }
    }

    /// Takes the mount down from another thread (a signal watcher); `run`
    /// then returns. Safe to call at any time, more than once.
    public func unmount() {
        handle.withLock { h in
            guard let session = h?.pointer else { return }
            fuse_session_exit(session)
            fuse_session_unmount(session)
        }
    }

    // MARK: the callbacks

    private static func current(_ req: fuse_req_t?) -> FuseMount {
        Unmanaged<FuseMount>.fromOpaque(fuse_req_userdata(req)!).takeUnretainedValue()
    }

    /// S_IFDIR, S_IFREG, S_IFLNK (Glibc's constants import ambiguously).
    static let directoryType: UInt32 = 0o040000
    static let regularType: UInt32 = 0o100000
    static let symlinkType: UInt32 = 0o120000

    /// The inode number of node `n`, and the node of inode `ino` (nil for
    /// one this mount never gave out).
    static func inode(_ n: Int) -> fuse_ino_t { fuse_ino_t(n) + 1 }
    private func node(_ ino: fuse_ino_t) -> Int? {
        guard ino >= 1, ino <= UInt64(tree.count) else { return nil }
        return Int(ino - 1)
    }

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

    private func fill(_ st: UnsafeMutablePointer<stat>, _ node: Int) {
        let ino = Self.inode(node)
        // Permission bits as stored, never setuid/setgid/sticky or writable;
        // directories always readable by their owner.
        switch tree.node(node) {
        case .directory(let names, _, let modified, let ns, let permissions):
            vault_fuse_stat(st, ino, Self.directoryType | permissions | 0o500, UInt(2 + names.count), 0, modified, modified, uid, gid)
            Self.nanoseconds(st, ns)
        case .snapshots(let modified), .unreadable(let modified):
            vault_fuse_stat(st, ino, Self.directoryType | 0o555, 2, 0, modified, modified, uid, gid)
        case .snapshotRoot(let s):
            vault_fuse_stat(st, ino, Self.directoryType | 0o555, 2, 0, s.start.seconds, s.start.seconds, uid, gid)
            Self.nanoseconds(st, s.start.nanoseconds)
        case .snapshotDirectory(_, _, let modified, let ns, let permissions):
            vault_fuse_stat(st, ino, Self.directoryType | permissions | 0o500, 2, 0, modified, modified, uid, gid)
            Self.nanoseconds(st, ns)
        case .snapshotFile(_, _, _, let size, let modified, let ns, let permissions):
            vault_fuse_stat(st, ino, Self.regularType | permissions, 1, Int64(clamping: size), modified, modified, uid, gid)
            Self.nanoseconds(st, ns)
        case .folder(let e), .broken(let e):
            vault_fuse_stat(st, ino, Self.directoryType | 0o555, 2, 0, e.modified, e.added, uid, gid)
        case .archivedDirectory(let c, let t):
            let (modified, permissions) = c.attributes(t)
            let links = UInt(2 + c.index.tree.children(t).count)
            vault_fuse_stat(st, ino, Self.directoryType | permissions | 0o500, links, 0, modified, modified, uid, gid)
        case .file(let e):
            vault_fuse_stat(st, ino, Self.regularType | UInt32(e.mode & 0o555), 1, Int64(clamping: e.size), e.modified, e.added, uid, gid)
        case .archived(let item, _, let size, let permissions, let modified):
            vault_fuse_stat(st, ino, Self.regularType | permissions, 1, Int64(clamping: size), modified, item.added, uid, gid)
        case .symlink(let target, let modified, let ns):
            vault_fuse_stat(st, ino, Self.symlinkType | 0o777, 1, Int64(target.count), modified, modified, uid, gid)
            Self.nanoseconds(st, ns)
        }
    }

    /// A snapshot's nanoseconds, on the modification and access times.
    private static func nanoseconds(_ st: UnsafeMutablePointer<stat>, _ ns: UInt32) {
        st.pointee.st_mtim.tv_nsec = Int(ns)
        st.pointee.st_atim.tv_nsec = Int(ns)
    }

    private static func isDirectory(_ node: MountTree.Node) -> Bool {
        switch node {
        case .directory, .archivedDirectory, .folder, .broken, .snapshots, .snapshotRoot, .snapshotDirectory, .unreadable: true
        default: false
        }
    }

    /// A listing from `offset` on, as much as fits in `size` bytes: each
    /// entry carries the offset of the one after it (".", "..", then the
    /// names), so a listing is served in as many requests as the kernel's
    /// buffers need. `plus`: readdirplus, whose entries carry each name's
    /// attributes, so the kernel looks none of them up again (`cp -r`, `ls -l`).
    private func list(_ req: fuse_req_t?, _ ino: fuse_ino_t, size: Int, offset: off_t, plus: Bool) {
        guard let node = node(ino) else { fuse_reply_err(req, ENOENT); return }
        guard Self.isDirectory(tree.node(node)) else { fuse_reply_err(req, ENOTDIR); return }
        guard let listing = tree.listing(node) else { fuse_reply_err(req, EIO); return }
        guard offset >= 0, offset < 2 + listing.count, size > 0 else { fuse_reply_buf(req, nil, 0); return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        var used = 0
        var st = stat()
        for i in Int(offset)..<(2 + listing.count) {
            let name = (i == 0 ? Array(".".utf8) : i == 1 ? Array("..".utf8) : listing[i - 2].name) + [0]
            let child = i >= 2 ? listing[i - 2].node : nil
            // "." and "..": a directory's mode and number only (the kernel links neither).
            if let child { fill(&st, child) } else { vault_fuse_stat(&st, i == 0 ? ino : Self.unknownInode, Self.directoryType, 2, 0, 0, 0, uid, gid) }
            let room = size - used
            let at = buffer.baseAddress!.advanced(by: used).assumingMemoryBound(to: CChar.self)
            let needed = name.withUnsafeBufferPointer { p in
                p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: name.count) {
                    plus ? vault_fuse_add_direntry_plus(req, at, room, $0, child.map(Self.inode) ?? 0, &st, Self.timeout, off_t(i + 1))
                         : fuse_add_direntry(req, at, room, $0, &st, off_t(i + 1))
                }
            }
            if needed > room { break }   // the kernel's buffer is full: it asks again from here
            used += needed
        }
        fuse_reply_buf(req, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), used)
    }

    private func openFile(_ node: Int) throws -> OpenFile? {
        let again = readWhole.withLock { $0.contains(node) }
        switch tree.node(node) {
        case .file(let e):
            return OpenFile(try opened(e).randomAccess(startingAt: again ? nil : 0, readingAheadUntil: e.size),
                            base: 0, size: e.size, node: node)
        case .archived(let e, let offset, let length, _, _):
            return OpenFile(try opened(e).randomAccess(startingAt: again ? nil : offset, readingAheadUntil: offset + length),
                            base: offset, size: length, node: node)
        case .snapshotFile(let snapshot, let tree, let name, let size, _, _, _):
            guard let snapshots, let e = try snapshots.entry(snapshot, tree: tree, named: name),
                  e.kind == .file, e.size == size else { throw VaultError.corruptedOrTampered }   // EIO
            return OpenFile(SnapshotFileContent(snapshots, snapshot, e), base: 0, size: size, node: node)
        default:
            return nil
        }
    }

    /// Replies to a read of `size` bytes from `offset` of `file`, written
    /// from where they lie (the decrypted chunks) by one writev.
    private func read(_ req: fuse_req_t?, _ file: OpenFile, size: Int, offset: UInt64) {
        guard offset < file.size else { fuse_reply_buf(req, nil, 0); return }
        let count = Int(min(UInt64(min(size, 1 << 30)), file.size - offset))
        let bytes: HeldBytes
        do {
            bytes = try file.content.withLock { try $0.bytes(at: file.base + offset, count: count) }
        } catch {
            fuse_reply_err(req, EIO)
            return
        }
        // Short inside the file's bounds: the archive ended early.
        guard bytes.count == count else { fuse_reply_err(req, EIO); return }
        // Outside the file's lock: the kernel's copy takes a while, and the
        // kernel sends a file's read-ahead requests several at once.
        let parts = bytes.spans.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        _ = fuse_reply_iov(req, parts, Int32(parts.count))   // a reader gone meanwhile is no error here
        withExtendedLifetime(bytes) {}
        if offset + UInt64(count) == file.size { _ = readWhole.withLock { $0.insert(file.node) } }
    }

    private static func operations() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { _, conn in
            // Requests of up to a whole chunk (1 MiB) rather than 128 KiB:
            // max_write also sets how many pages a read may carry. Reads
            // through the page cache still come one read-ahead window at a
            // time (128 KiB; 256 KiB for a reader advising sequential access,
            // as cat and cp do): the kernel caps max_readahead at the bdi's
            // read_ahead_kb.
            conn?.pointee.max_write = 1 << 20
            conn?.pointee.max_readahead = 1 << 20
        }
        ops.lookup = { req, parent, name in
            let me = FuseMount.current(req)
            guard let name, let parent = me.node(parent) else { fuse_reply_err(req, ENOENT); return }
            let bytes = UnsafeRawBufferPointer(start: name, count: strlen(name))
            switch me.tree.child(of: parent, named: bytes) {
            case .node(let n):
                var st = stat()
                me.fill(&st, n)
                _ = vault_fuse_reply_entry(req, FuseMount.inode(n), &st, FuseMount.timeout)
            case .missing: _ = vault_fuse_reply_entry(req, 0, nil, FuseMount.timeout)   // cached as missing
            case .failed: fuse_reply_err(req, EIO)
            }
        }
        ops.getattr = { req, ino, _ in
            let me = FuseMount.current(req)
            guard let node = me.node(ino) else { fuse_reply_err(req, ENOENT); return }
            var st = stat()
            me.fill(&st, node)
            fuse_reply_attr(req, &st, FuseMount.timeout)
        }
        ops.readlink = { req, ino in
            let me = FuseMount.current(req)
            guard let node = me.node(ino), case .symlink(let target, _, _) = me.tree.node(node) else { fuse_reply_err(req, EINVAL); return }
            // A target ends at its first NUL (a C string), as readlink(2) would show it.
            let c = Array(target.prefix { $0 != 0 }) + [0]
            c.withUnsafeBufferPointer { p in
                p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: c.count) { _ = fuse_reply_readlink(req, $0) }
            }
        }
        ops.readdir = { req, ino, size, offset, _ in FuseMount.current(req).list(req, ino, size: size, offset: offset, plus: false) }
        ops.readdirplus = { req, ino, size, offset, _ in FuseMount.current(req).list(req, ino, size: size, offset: offset, plus: true) }
        ops.open = { req, ino, fi in
            let me = FuseMount.current(req)
            guard let fi, let node = me.node(ino) else { fuse_reply_err(req, ENOENT); return }
            guard fi.pointee.flags & O_ACCMODE == O_RDONLY else { fuse_reply_err(req, EROFS); return }
            let file: OpenFile
            do {
                guard let opened = try me.openFile(node) else { fuse_reply_err(req, EISDIR); return }
                file = opened
            } catch {
                fuse_reply_err(req, EIO)
                return
            }
            let fh = me.open.withLock { table in
                defer { table.next += 1 }
                table.files[table.next] = file
                return table.next
            }
            fi.pointee.fh = fh
            fi.pointee.keep_cache = 1
            // An open the kernel gave up on meanwhile gets no release.
            if fuse_reply_open(req, fi) != 0 { _ = me.open.withLock { $0.files.removeValue(forKey: fh) } }
        }
        ops.read = { req, _, size, offset, fi in
            let me = FuseMount.current(req)
            guard let fi, offset >= 0, let file = me.open.withLock({ $0.files[fi.pointee.fh] }) else { fuse_reply_err(req, EBADF); return }
            me.read(req, file, size: size, offset: UInt64(offset))
        }
        ops.release = { req, _, fi in
            // The entry is the last reference once no read is in flight (the
            // kernel sends no release before): its reader, descriptor and
            // buffers go here; a chunk still being opened ahead frees its own.
            if let fi { _ = FuseMount.current(req).open.withLock { $0.files.removeValue(forKey: fi.pointee.fh) } }
            fuse_reply_err(req, 0)
        }
        return ops
    }
}

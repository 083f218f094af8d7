import Dispatch
import Synchronization
import System
import VaultCore

/// How many bytes a backup will read, counted beside it so the progress
/// line can say how long is left (`vault backup` on a terminal only). It
/// walks the paths as BackupRun does, with the same filter, and only looks
/// (lstat, no reads): a regular file the parent's file list shows unchanged
/// will not be read, any other will, in full. An estimate: a file that
/// changes meanwhile, or whose pieces this host no longer has, is read all
/// the same.
public final class BackupScan: Sendable {
    public struct Totals: Sendable {
        /// Bytes of the files the backup will read, and whether the walk has ended.
        public var toRead: UInt64 = 0
        public var finished = false
    }

    private let state = Mutex(Totals())
    private let stop = Atomic<Bool>(false)

    public var totals: Totals { state.withLock { $0 } }

    /// Starts the walk on a thread of its own; `cancel` ends it early.
    public static func start(options: BackupOptions, cache: BackupCache?) -> BackupScan {
        let scan = BackupScan()
        let listPath = try? cache?.fileListPath(host: options.host, paths: options.paths)
        let key = cache?.key
        DispatchQueue.global(qos: .utility).async {
            let parent = listPath.flatMap { p in key.flatMap { FileListCursor(path: p, key: $0) } }
            var walk = Walk(scan: scan, filter: options.filter, parent: parent)
            for path in options.paths {
                guard let st = try? Syscall.status(of: FilePath(bytes: path)) else { continue }
                let name = Array(path.split(separator: 0x2f).last ?? [])
                walk.visit(name: name, path: path, relative: name, status: st, device: st.device)
            }
            scan.state.withLock { $0.finished = true }
        }
        return scan
    }

    public func cancel() { stop.store(true, ordering: .relaxed) }

    private struct Walk {
        let scan: BackupScan
        let filter: BackupFilter
        let parent: FileListCursor?
        var links = Set<[UInt64]>()

        mutating func visit(name: [UInt8], path: [UInt8], relative: [UInt8], status st: FileStatus, device: UInt64) {
            if scan.stop.load(ordering: .relaxed) || filter.excludes(name: name, path: path) { return }
            switch st.kind {
            case .regular:
                if let limit = filter.largerThan, st.size > limit { return }
                if st.links > 1, !links.insert([st.device, st.inode]).inserted { return }
                if let old = parent?.record(for: relative), old.matches(st) { return }
                scan.state.withLock { $0.toRead &+= st.size }
            case .directory:
                if filter.oneFileSystem, st.device != device { return }
                if filter.isCache(directory: path) { return }
                guard let names = try? Syscall.listDirectory(FilePath(bytes: path)) else { return }
                for child in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    let childPath = path + [0x2f] + child
                    guard let cst = try? Syscall.status(of: FilePath(bytes: childPath)) else { continue }
                    visit(name: child, path: childPath, relative: relative + [0] + child, status: cst, device: device)
                }
            default:
                return
            }
        }
    }
}

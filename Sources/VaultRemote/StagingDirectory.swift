import Synchronization
import System
import VaultCore
import VaultCrypto

/// A directory beside `target` where a clone or pull lands before it is
/// checked: `.<target name>.<purpose>-<pid>-<start>-<8 hex>`. Erased on
/// deinit unless committed (renamed into place), so a failure leaves
/// nothing behind; one left by a killed process is only disk space and is
/// erased by the next clone or pull beside it (ScratchNames).
public final class StagingDirectory: Sendable {
    public let path: String
    public let target: String
    /// Set by `commit` once the rename is done; read by deinit.
    private let committed = Mutex(false)

    public init(beside target: String, purpose: String) throws {
        var t = target
        while t.count > 1, t.hasSuffix("/") { t.removeLast() }
        self.target = t
        let parent = VaultDirectory.directory(of: t)
        if parent != ".", try Syscall.status(of: parent, followLinks: true) == nil { try Vault.makeDirectories(parent) }
        let name = String(t.split(separator: "/").last ?? "vault")
        let prefix = ".\(name).\(purpose)-"
        ScratchNames.removeAbandoned(in: parent, prefix: prefix)
        path = parent + "/" + (try ScratchNames.make(prefix))
        try Syscall.mkdir(path)
        for sub in ["items", "inbox"] { try Syscall.mkdir(path + "/" + sub) }
    }

    deinit { if !committed.withLock({ $0 }) { _ = Eraser.erase(path) } }

    /// Renames the staging directory to the target (absent, or an empty
    /// directory) and fsyncs the parent.
    public func commit() throws {
        if let st = try Syscall.status(of: target) {
            guard st.kind == .directory, try Syscall.listDirectory(target).isEmpty else {
                throw VaultError.alreadyExists(path: target)
            }
            try Syscall.rmdir(target)
        }
        try Syscall.renameNoReplace(path, target)
        committed.withLock { $0 = true }
        try Syscall.fsyncDirectory(VaultDirectory.directory(of: target))
    }

    /// fsync every file rclone wrote (it does not) and the directories.
    public func syncAll() throws {
        for dir in [path + "/items", path + "/inbox", path] {
            for name in try VaultDirectory.names(in: dir) {
                let p = dir + "/" + name
                guard let st = try Syscall.status(of: p), st.kind == .regular else { continue }
                try FileHandleFD(readingFrom: p).sync()
            }
            try Syscall.fsyncDirectory(dir)
        }
    }
}

import System
import VaultCore

/// The vault's remotes, in `DIR/remotes` (docs/FORMAT.md, "Remote copy"):
///
///     "vault remotes v2\n"
///     then one line per remote: NAME \t TARGET \t KNOWN \t PENDING \t HEADER \n
///
/// (version 1, still read, has no HEADER field.)
/// KNOWN is the generation of the manifest this vault last pushed to or
/// pulled from the remote (decimal, 0 for never); PENDING the generation a
/// push was about to put there, a colon, and the first 16 bytes of the
/// SHA-256 of that manifest file in hex ("-" for none), which lets a later
/// push recognise a manifest a killed push of ours left there; HEADER the
/// first 16 bytes of the SHA-256 of the header file both sides last held
/// ("-" for not known), which tells push and pull which side's header
/// changed since (SyncPlan). No secrets: the
/// storage credentials stay in rclone's config. Written atomically.
public struct RemoteConfig: Equatable, Sendable {
    public struct Remote: Equatable, Sendable {
        public let name: String
        public let target: String
        public var known: UInt64
        public var pending: Pending?
        /// The digest (`RemotePush.digest`) of the header both sides last held.
        public var header: String?
        public init(name: String, target: String, known: UInt64 = 0, pending: Pending? = nil, header: String? = nil) {
            (self.name, self.target, self.known, self.pending, self.header) = (name, target, known, pending, header)
        }
    }

    /// A manifest a push was about to put on the remote.
    public struct Pending: Equatable, Sendable {
        public let generation: UInt64
        /// The first 16 bytes of SHA-256 of the manifest file, hex.
        public let digest: String
        public init(generation: UInt64, digest: String) { (self.generation, self.digest) = (generation, digest) }

        init?(_ text: Substring) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let g = UInt64(parts[0]), RemoteNames.isItemID(parts[1]) else { return nil }
            (generation, digest) = (g, String(parts[1]))
        }

        var text: String { "\(generation):\(digest)" }
    }

    static let firstLine = "vault remotes v2", firstLineV1 = "vault remotes v1"
    /// At most this many remotes, and this many bytes of file.
    public static let maxRemotes = 64
    static let maxFileSize = 1 << 17

    public var remotes: [Remote] = []

    public init(remotes: [Remote] = []) { self.remotes = remotes }

    public static func path(_ vault: String) -> String { VaultPaths(root: vault).root + "/remotes" }

    /// The file's remotes; none if there is no file.
    public static func read(vault: String) throws -> RemoteConfig {
        let path = Self.path(vault)
        guard try Syscall.status(of: path) != nil else { return RemoteConfig() }
        let raw = try VaultDirectory.readFile(path, limit: maxFileSize)
        guard let text = String(validating: raw, as: UTF8.self) else { throw bad() }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(firstLine) || lines.first == Substring(firstLineV1), lines.last == "" else { throw bad() }
        let fields = lines.first == Substring(firstLine) ? 5 : 4
        lines.removeFirst(); lines.removeLast()
        guard lines.count <= maxRemotes else { throw bad() }
        var config = RemoteConfig()
        for line in lines {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == fields, RemoteNames.isValidName(String(f[0])),
                  let target = RemoteNames.normalizedTarget(String(f[1])), target == f[1],
                  let known = UInt64(f[2]), f[3] == "-" || Pending(f[3]) != nil,
                  fields == 4 || f[4] == "-" || RemoteNames.isItemID(f[4]),
                  config.remote(named: String(f[0])) == nil else { throw bad() }
            let header = fields == 5 && f[4] != "-" ? String(f[4]) : nil
            config.remotes.append(Remote(name: String(f[0]), target: target, known: known, pending: Pending(f[3]), header: header))
        }
        return config
    }

    static func bad() -> RemoteError { .malformedRemote(.remotesFileDamaged) }

    public func write(vault: String) throws {
        let text = ([Self.firstLine] + remotes.map {
            "\($0.name)\t\($0.target)\t\($0.known)\t\($0.pending?.text ?? "-")\t\($0.header ?? "-")"
        })
            .map { $0 + "\n" }.joined()
        try VaultDirectory.atomicWrite(Array(text.utf8), to: Self.path(vault))
    }

    public func remote(named name: String) -> Remote? { remotes.first { $0.name == name } }

    /// Reads the vault's file, applies `change` to the remote named as
    /// `remote` (that one as it was if the file no longer has it), writes
    /// the file back (atomically) and returns the changed remote: the one
    /// read-modify-write that push and pull use.
    @discardableResult
    public static func modify(vault: String, _ remote: Remote, _ change: (inout Remote) -> Void) throws -> Remote {
        var config = try read(vault: vault)
        var updated = config.remote(named: remote.name) ?? remote
        change(&updated)
        config.update(updated)
        try config.write(vault: vault)
        return updated
    }

    public mutating func update(_ remote: Remote) {
        if let i = remotes.firstIndex(where: { $0.name == remote.name }) { remotes[i] = remote } else { remotes.append(remote) }
    }

    /// Adds a remote; refuses a taken name, a bad name or target.
    public mutating func add(name: String, target: String) throws -> Remote {
        guard RemoteNames.isValidName(name) else {
            throw RemoteError.invalidRemoteName(name)
        }
        guard let t = RemoteNames.normalizedTarget(target) else {
            throw RemoteError.invalidRemoteTarget(target)
        }
        guard remote(named: name) == nil else { throw RemoteError.remoteExists(name) }
        guard remotes.count < Self.maxRemotes else { throw RemoteError.tooManyRemotes }
        let r = Remote(name: name, target: t)
        remotes.append(r)
        return r
    }

    /// The remote `name`, or when `name` is nil the default: the first in
    /// the file, which is the one added first (a clone's `origin`), as git
    /// pushes to `origin` unless told otherwise.
    public func pick(_ name: String?) throws -> Remote {
        if let name {
            guard let r = remote(named: name) else { throw RemoteError.noSuchRemote(name) }
            return r
        }
        guard let first = remotes.first else { throw RemoteError.noSuchRemote("") }
        return first
    }
}

import System
import VaultCore

/// What `vault backup` leaves out, in the order restic users expect.
/// A pattern without '/' is matched against each name; one starting with
/// '/' against the whole absolute path; any other one with '/' against
/// the path's last components ("src/*.o" matches "/home/me/src/a.o").
/// Wildcards never cross '/'. A directory left out takes everything under it.
public struct BackupFilter: Sendable {
    public var patterns: [[UInt8]] = []
    /// The same rules, letters matched whatever their case (`--iexclude`,
    /// ASCII letters: fnmatch's FNM_CASEFOLD).
    public var caseFoldedPatterns: [[UInt8]] = []
    /// Names whose presence in a directory leaves it out (`--exclude-if-present`).
    public var ifPresent: [[UInt8]] = []
    /// Directories holding a valid CACHEDIR.TAG (bford.net/projects/cachedir).
    public var excludeCaches = false
    public var largerThan: UInt64?
    /// Do not descend into directories of another file system than their path's.
    public var oneFileSystem = false
    public init() {}

    static let cacheTag = Array("Signature: 8a477f597d28d172789f06886806bc55".utf8)

    /// Lines of an exclude file: one pattern a line; blank lines and lines
    /// starting with '#' are skipped, surrounding spaces trimmed.
    public static func patterns(inExcludeFile text: [UInt8]) -> [[UInt8]] {
        text.split(separator: 0x0a).map { line in
            Array(line.drop(while: { $0 == 0x20 || $0 == 0x09 }).reversed().drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0d }).reversed())
        }.filter { !$0.isEmpty && $0.first != 0x23 }
    }

    func excludes(name: [UInt8], path: [UInt8]) -> Bool {
        Self.matches(patterns, name: name, path: path) || Self.matches(caseFoldedPatterns, name: name, path: path, ignoringCase: true)
    }

    /// Whether any of `patterns` matches the entry `name` at `path` (an
    /// absolute path ending in `name`), by the rules above; `restore`'s
    /// --include and --exclude use them too, on the snapshot's paths.
    public static func matches(_ patterns: [[UInt8]], name: [UInt8], path: [UInt8], ignoringCase: Bool = false) -> Bool {
        patterns.contains { p in
            guard p.contains(0x2f) else { return Syscall.matches(pattern: p, name, pathname: false, ignoringCase: ignoringCase) }
            if p.first == 0x2f { return Syscall.matches(pattern: p, path, pathname: true, ignoringCase: ignoringCase) }
            // Every suffix of the path that starts after a '/'.
            return path.indices.contains { i in
                path[i] == 0x2f && Syscall.matches(pattern: p, Array(path[(i + 1)...]), pathname: true, ignoringCase: ignoringCase)
            }
        }
    }

    /// Whether the directory at `path` holds one of `ifPresent` (any kind
    /// of entry, looked up by name: a link counts, unfollowed).
    func holdsMarker(directory path: [UInt8]) -> Bool {
        ifPresent.contains { name in (try? Syscall.status(of: FilePath(bytes: path + [0x2f] + name))).flatMap { $0 } != nil }
    }

    func isCache(directory path: [UInt8]) -> Bool {
        guard excludeCaches, let f = try? FileHandleFD(readingFrom: FilePath(bytes: path + Array("/CACHEDIR.TAG".utf8))) else {
            return false
        }
        var head = [UInt8](repeating: 0, count: Self.cacheTag.count)
        let n = (try? head.withUnsafeMutableBytes { try f.read(at: 0, into: $0) }) ?? 0
        return n == head.count && head == Self.cacheTag
    }
}

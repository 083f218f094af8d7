import System

// The names a vault's remote copy may hold (docs/FORMAT.md, "Remote
// copy"): the local layout's, plus `.push-<32 hex>`, a header or manifest
// on its way in (renamed over the real name by a server-side move).

/// Checks on names and targets, and the remote layout's names.
public enum RemoteNames {
    public static let header = "vault.header"
    public static let manifest = "manifest"
    public static let pushPrefix = ".push-"

    /// A remote's name: 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '-' or '.').
    public static func isValidName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), let first = name.utf8.first, first != UInt8(ascii: "-"),
              first != UInt8(ascii: ".") else { return false }
        return name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// An rclone path (`s3:bucket/vault`, `/mnt/usb/vault`): 1 to 1024
    /// bytes, no control characters, not starting with '-' (rclone would read
    /// it as a flag). Trailing slashes are dropped.
    public static func normalizedTarget(_ target: String) -> String? {
        var t = Substring(target)
        while t.count > 1, t.hasSuffix("/") { t.removeLast() }
        guard (1...1024).contains(t.utf8.count), !t.hasPrefix("-"),
              t.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7f }) else { return nil }
        return String(t)
    }

    /// One spelling per place, for what is remembered per target (the
    /// fingerprint pins): a local path (no `name:` before its first '/')
    /// resolved (`realpath`: `/x/./RC`, `/x//RC` and a symlink to it are one
    /// place), or, for one that does not exist, its dot and double-slash
    /// components dropped; a remote path with those dropped as well.
    public static func canonicalTarget(_ target: String) -> String {
        let colon = target.firstIndex(of: ":"), slash = target.firstIndex(of: "/")
        let isLocal = colon == nil || (slash != nil && slash! < colon!)
        if isLocal, let resolved = try? Syscall.realPath(target) { return resolved.description }
        let prefixEnd = isLocal ? target.startIndex : target.index(after: colon!)
        let absolute = target[prefixEnd...].hasPrefix("/")
        let parts = target[prefixEnd...].split(separator: "/").filter { $0 != "." }
        return String(target[..<prefixEnd]) + (absolute ? "/" : "") + parts.joined(separator: "/")
    }

    /// `target/path`, for rclone (a bare "remote:" gets no slash).
    public static func join(_ target: String, _ path: String) -> String {
        target.hasSuffix(":") || target.hasSuffix("/") ? target + path : target + "/" + path
    }

    static func isAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
    }

    /// 32 lower-case hex digits: an item id's name.
    public static func isItemID(_ s: Substring) -> Bool {
        s.utf8.count == 32 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// What one remote path is.
    public enum Kind: Equatable, Sendable {
        case header, manifest, item(String), dropInContent(String), dropInEnvelope(String), pushTemp, other
    }

    public static func kind(of path: String) -> Kind {
        if path == header { return .header }
        if path == manifest { return .manifest }
        if path.hasPrefix(pushPrefix), isItemID(path.dropFirst(pushPrefix.count)) { return .pushTemp }
        if path.hasPrefix("items/"), case let id = path.dropFirst(6), isItemID(id) { return .item(String(id)) }
        if path.hasPrefix("inbox/") {
            let name = path.dropFirst(6)
            if name.hasSuffix(".item"), case let id = name.dropLast(5), isItemID(id) { return .dropInContent(String(id)) }
            if name.hasSuffix(".env"), case let id = name.dropLast(4), isItemID(id) { return .dropInEnvelope(String(id)) }
        }
        return .other
    }
}

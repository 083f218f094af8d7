import System
import VaultCore

/// The one shape of the per-remote lists of item ids (`remote.<NAME>.inbox`,
/// `remote.<NAME>.claimed`): a first line naming the list, then one 32-hex
/// id and "\n" per line. Written atomically; a damaged file reads as empty.
enum IDListFile {
    static func read(_ path: String, firstLine: String, max: Int) -> Set<String> {
        guard let raw = try? VaultDirectory.readFile(path, limit: 64 + 33 * max),
              let text = String(validating: raw, as: UTF8.self) else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(firstLine), lines.last == "" else { return [] }
        lines.removeFirst(); lines.removeLast()
        guard lines.allSatisfy({ RemoteNames.isItemID($0) }) else { return [] }
        return Set(lines.map(String.init))
    }

    /// Replaces the list (the file goes when it is empty); past `max`, the
    /// greatest ids are kept.
    static func write(_ ids: Set<String>, to path: String, firstLine: String, max: Int) throws {
        if ids.isEmpty {
            if try Syscall.status(of: path) != nil { try Syscall.unlink(path) }
            return
        }
        let text = ([firstLine] + ids.sorted().suffix(max)).map { $0 + "\n" }.joined()
        try VaultDirectory.atomicWrite(Array(text.utf8), to: path)
    }
}

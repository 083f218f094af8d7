import System
import VaultCore

/// Files in a remote's inbox that are no whole drop-in: an upload a host
/// never finished (a `--to` host may create but not delete, so it cannot
/// tidy up after itself), or junk anyone who may write there put in. The
/// owner's pull names them and deletes each once it has seen it, at the
/// same size, for `grace` (docs/FORMAT.md, "Remote drop-ins"): an upload
/// under way is never taken for one left behind. Remembered, machine-local,
/// in `remote.<NAME>.strays`:
///
///     "vault strays v1\n" || (first seen (decimal Unix seconds) "\t" size "\t" hex of the path "\n")*
///
/// The path in hex: a name anyone with create rights chose cannot add a
/// line (a newline in it would otherwise claim another stray, an upload
/// under way, was first seen long ago). Unreadable or of another shape,
/// it counts as empty: every stray is new again, which only waits longer.
public enum RemoteStrays {
    public static let grace: Int64 = 24 * 3600
    static let firstLine = "vault strays v1"
    static let maxListed = 100_000

    static func path(_ vault: String, _ name: String) -> String { VaultPaths(root: vault).root + "/remote.\(name).strays" }

    /// Records the strays of this listing (path: size) and returns those
    /// seen at this size for at least `grace`, to delete.
    static func due(_ strays: [String: UInt64], vault: String, remote name: String, now: Int64) -> [String] {
        var known: [String: (seen: Int64, size: UInt64)] = [:]
        if let bytes = try? VaultDirectory.readFile(path(vault, name), limit: 1 << 24) {
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
            if lines.first == Substring(firstLine) {
                for line in lines.dropFirst() {
                    let f = line.split(separator: "\t", maxSplits: 2)
                    guard f.count == 3, let seen = Int64(f[0]), let size = UInt64(f[1]), let path = Hex.decode(String(f[2])) else { continue }
                    known[String(decoding: path, as: UTF8.self)] = (seen, size)
                }
            }
        }
        var kept: [(String, Int64, UInt64)] = []
        var due: [String] = []
        for (p, size) in strays.sorted(by: { $0.key < $1.key }) {
            // A stray that grew (an upload going on) starts its grace again.
            let seen = known[p].flatMap { $0.size == size ? $0.seen : nil } ?? now
            if now - seen >= grace { due.append(p) } else if kept.count < maxListed { kept.append((p, seen, size)) }
        }
        let text = firstLine + "\n" + kept.map { "\($0.1)\t\($0.2)\t\(Hex.encode(Array($0.0.utf8)))\n" }.joined()
        // Lost, the strays are new again at the next pull: they wait longer.
        try? VaultDirectory.atomicWrite(Array(text.utf8), to: path(vault, name))
        return due
    }
}

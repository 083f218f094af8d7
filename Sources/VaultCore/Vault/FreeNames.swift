import System
import VaultCrypto

extension Manifest {
    /// `name` if free, else "stem (n).ext" with the smallest free n ≥ 2 (the
    /// extension starts at the last '.', unless that is the first character).
    /// The result is always a name the reader accepts: when the suffix would
    /// pass the name limit, whole characters are cut from the end of the stem
    /// (then of the extension). `clashes` remembers, per name, where the last
    /// search ended, so N drop-ins with one name cost O(N), not O(N²).
    func freeName(like name: String, clashes: inout [String: Int]) -> String {
        guard contains(name: name) else { return name }
        var stem = Substring(name), ext: Substring = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { (stem, ext) = (name[..<dot], name[dot...]) }
        var n = clashes[name] ?? 2
        while true {
            let suffix = " (\(n))"
            var (s, e) = (stem, ext)
            while s.utf8.count + suffix.utf8.count + e.utf8.count > ManifestEntry.maxNameLength {
                if !s.isEmpty { s.removeLast() } else { e.removeLast() }
            }
            let candidate = String(s) + suffix + String(e)
            n += 1
            if !contains(name: candidate) {
                clashes[name] = n
                return candidate
            }
        }
    }

    /// `freeName` for a single name.
    func freeName(like name: String) -> String {
        var clashes: [String: Int] = [:]
        return freeName(like: name, clashes: &clashes)
    }
}

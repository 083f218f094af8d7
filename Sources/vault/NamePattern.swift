import VaultCore

/// Shell-style patterns for item names (`vault restore '*.pdf'`): `*` any
/// run of characters, `?` one character, `[abc]`, `[a-z]` and `[!abc]` one
/// of a set, `\` takes the next character literally. A name is a flat
/// string, so `*` matches `/` and a leading `.` too (fnmatch with no flags).
///
/// A word that is the exact name of an item always means that item, even if
/// it holds `*` or `[`: patterns only widen what could not otherwise match.
struct NamePattern {
    private let scalars: [Unicode.Scalar]

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    /// Whether `text` has any character that makes it a pattern.
    static func isPattern(_ text: String) -> Bool { text.unicodeScalars.contains { "*?[".unicodeScalars.contains($0) } }

    func matches(_ name: String) -> Bool {
        let subject = Array(name.unicodeScalars)
        // Iterative matching with one backtrack point for the last `*`:
        // linear in practice, never exponential on hostile names.
        var (p, s) = (0, 0)
        var star: (p: Int, s: Int)?
        while s < subject.count {
            if p < scalars.count, scalars[p] == "*" {
                star = (p, s)
                p += 1
                continue
            }
            if p < scalars.count, let next = matchOne(at: p, subject[s]) {
                (p, s) = (next, s + 1)
                continue
            }
            guard let last = star else { return false }
            star = (last.p, last.s + 1)
            (p, s) = (last.p + 1, last.s + 1)
        }
        while p < scalars.count, scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }

    /// If the pattern element at `p` matches `c`, the index after it.
    private func matchOne(at p: Int, _ c: Unicode.Scalar) -> Int? {
        switch scalars[p] {
        case "?": return p + 1
        case "\\" where p + 1 < scalars.count: return scalars[p + 1] == c ? p + 2 : nil
        case "[":
            guard let (matched, end) = matchSet(from: p + 1, c) else { return scalars[p] == c ? p + 1 : nil }
            return matched ? end : nil
        default: return scalars[p] == c ? p + 1 : nil
        }
    }

    /// A bracket set starting after `[`: whether it holds `c`, and the index
    /// after its `]`; nil if it never closes (then `[` is literal).
    private func matchSet(from start: Int, _ c: Unicode.Scalar) -> (Bool, Int)? {
        var i = start
        let negated = i < scalars.count && (scalars[i] == "!" || scalars[i] == "^")
        if negated { i += 1 }
        var found = false
        var first = true
        while i < scalars.count {
            if scalars[i] == "]" && !first { return (found != negated, i + 1) }
            first = false
            let low = scalars[i]
            if i + 2 < scalars.count, scalars[i + 1] == "-", scalars[i + 2] != "]" {
                if low.value <= c.value && c.value <= scalars[i + 2].value { found = true }
                i += 3
            } else {
                if low == c { found = true }
                i += 1
            }
        }
        return nil
    }
}

extension UnlockedVault {
    /// The entries `words` name, in the order given, each once: an exact
    /// name, or a pattern matching at least one item (in name order).
    /// A word that names nothing is `noSuchItem`, before anything is done.
    func entries(selectedBy words: [String]) throws -> [ManifestEntry] {
        var chosen: [ManifestEntry] = []
        var seen = Set<String>()
        for word in words {
            if let exact = manifest.entry(named: word), !exact.kind.isBackupStorage {
                if seen.insert(exact.name).inserted { chosen.append(exact) }
                continue
            }
            guard NamePattern.isPattern(word) else { throw VaultError.noSuchItem(name: word) }
            let pattern = NamePattern(word)
            // Each item once: its current version (older ones are chosen by --version/--at).
            let matched = manifest.items.map(\.current).filter { pattern.matches($0.name) }
                .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            if matched.isEmpty { throw CLIError(message: "no item matches '\(word)'", hints: ["see 'vault list'"], code: .noSuchItem) }
            for e in matched where seen.insert(e.name).inserted { chosen.append(e) }
        }
        return chosen
    }
}

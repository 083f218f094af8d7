import Foundation

// Test support shared by the test targets that check FORMAT.md's
// published vectors (a plain target: test targets cannot import each other).

/// The test vectors docs/FORMAT.md publishes, read from FORMAT.md itself.
public enum FormatVectors {
    /// The hex blocks of one section (from the heading `section` to the next
    /// heading of its level or above): a line `name:` in backquotes followed
    /// by indented hex lines.
    public static func published(section: String) throws -> [String: String] {
        let text = try formatText()
        guard let start = text.range(of: section) else { return [:] }
        let level = section.prefix { $0 == "#" }.count
        var out: [String: String] = [:], current: String?
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            let hashes = line.prefix { $0 == "#" }.count
            if hashes > 0 && hashes <= level { break }
            if line.hasPrefix("       "), let c = current {
                out[c, default: ""] += line.trimmingCharacters(in: .whitespaces)
            } else if line.hasSuffix(":"), line.hasPrefix("`") {
                current = String(line.dropLast().split(separator: "`").first ?? "")
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                current = nil
            }
        }
        return out
    }

    /// The hex after `    NAME = ` (any spaces before the `=`) on the
    /// first such indented line after the heading `section` whose value
    /// is all hex digits: a vector written as assignments (`name   = …`,
    /// `record = …`), not the format's own `name = HKDF(…)` above it.
    public static func assigned(_ name: String, section: String) throws -> String? {
        let text = try formatText()
        guard let start = text.range(of: section) else { return nil }
        for line in text[start.upperBound...].split(separator: "\n") where line.hasPrefix("    ") {
            let parts = line.split(separator: "=", maxSplits: 1)
            let value = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            if parts[0].trimmingCharacters(in: .whitespaces) == name, !value.isEmpty, value.allSatisfy(\.isHexDigit),
               value.lowercased() == value {
                return value
            }
        }
        return nil
    }

    private static func formatText() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
    }
}

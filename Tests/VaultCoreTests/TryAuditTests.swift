import Foundation
import Testing

/// Every `try?` in VaultCore says why dropping the error is right (issue
/// 39): a comment on its line, or on the line above (a statement that goes
/// on over several lines counts as one). An error that decides whether
/// data is kept or deleted is handled instead, never dropped.
@Suite struct TryAuditTests {
    @Test func everyTryQuestionMarkInVaultCoreSaysWhy() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources/VaultCore")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(files.count > 50)
        func hasTry(_ s: String) -> Bool { s.range(of: #"\btry\?"#, options: .regularExpression) != nil }
        var unexplained: [String] = [], count = 0
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var explained: [Bool] = []
            for (i, line) in lines.enumerated() {
                let code = line.components(separatedBy: "//")[0]
                let above = i > 0 ? lines[i - 1].trimmingCharacters(in: .whitespaces) : ""
                let continues = i > 0 && explained[i - 1] && hasTry(lines[i - 1])
                    && [",", "(", "&&", "||"].contains { lines[i - 1].components(separatedBy: "//")[0].trimmingCharacters(in: .whitespaces).hasSuffix($0) }
                explained.append(line.contains("//") || above.hasPrefix("//") || continues)
                if hasTry(code) { count += 1 }
                if hasTry(code) && !explained[i] {
                    unexplained.append("\(file.lastPathComponent):\(i + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(count > 0)
        #expect(unexplained.isEmpty, "a try? without its reason:\n\(unexplained.joined(separator: "\n"))")
    }
}

import Foundation
import VaultCrypto

// Kit armor (docs/FORMAT.md, "Recovery kit"): the 116-byte payload in base32
// (RFC 4648 alphabet, no padding: 186 characters), 20 characters a line, each
// line numbered and ending in a 2-character checksum, so a mistyped line is
// found by its number:
//
//   -----BEGIN VAULT RECOVERY KIT-----
//   01 ABCD EFGH IJKL MNOP QRST 7K
//   ...
//   10 ABCD EF 2Q
//   -----END VAULT RECOVERY KIT-----
//
// checksum = the first 10 bits of SHA-256("vault v1 kit line" || u8 n || the
// line's characters), as 2 base32 characters. Reading is forgiving of what
// hands and scanners do: case, extra spaces, and 0/1/8 for O/I/B.

public enum KitArmor {
    public static let begin = "-----BEGIN VAULT RECOVERY KIT-----"
    public static let end = "-----END VAULT RECOVERY KIT-----"
    static let alphabet = Base32.alphabet
    static let lineLength = 20
    static let checksumLabel = Array("vault v1 kit line".utf8)

    public static func armor(_ payload: [UInt8]) -> String {
        let text = Base32.encode(payload)
        var lines = [begin]
        for (i, start) in stride(from: 0, to: text.count, by: lineLength).enumerated() {
            let chunk = Array(text[start..<min(start + lineLength, text.count)])
            let groups = stride(from: 0, to: chunk.count, by: 4).map { String(decoding: chunk[$0..<min($0 + 4, chunk.count)], as: UTF8.self) }
            let n = i + 1
            lines.append((n < 10 ? "0\(n)" : "\(n)") + " " + groups.joined(separator: " ") + " "
                         + String(decoding: checksum(line: UInt8(n), chunk), as: UTF8.self))
        }
        return (lines + [end]).joined(separator: "\n")
    }

    /// The armored lines of a kit payload (`RecoveryKit.length` bytes: 186 characters).
    static let lineCount = ((RecoveryKit.length * 8 + 4) / 5 + lineLength - 1) / lineLength
    public static var lines: Int { lineCount }

    /// Finds the kit's lines in `text` and decodes them. The BEGIN and END
    /// lines are optional: with them, every line between is a kit line;
    /// without (lines typed by hand), the lines that start with a two-digit
    /// number are. Spacing is free: a line is its characters with every
    /// space, tab and '-' removed, the first two being its number and the
    /// last two its checksum; the spaces typed between groups only help to
    /// say which group is wrong. Lines may come in any order. A problem with
    /// one line is `kitLine(line:problem:)`, the first in line order; a kit
    /// that is not there at all, or whose lines are right but whose payload
    /// is not a kit, is `kitDamaged`. Work is bounded by the
    /// text's size, whatever it holds.
    public static func decode(_ text: String) throws -> [UInt8] {
        let separators: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "-")]
        let typed = text.split(whereSeparator: \.isNewline).map { Array($0.utf8) }
        let all = typed.map { $0.filter { !separators.contains($0) } }
        let beginLine = squeezed(begin), endLine = squeezed(end)
        let b = all.firstIndex(of: beginLine)
        let from = b.map { $0 + 1 } ?? 0
        let to = all[from...].firstIndex(of: endLine) ?? all.count
        let marked = b != nil
        var bodies = [[UInt8]?](repeating: nil, count: lineCount + 1)
        var problems: [(line: Int, problem: KitLineProblem)] = []
        var failed: [Int: [UInt8]] = [:]   // the raw text of lines that failed, for suspectGroup
        for index in from..<to where !all[index].isEmpty {
            let raw = all[index]
            guard raw.count >= 2, isDigit(raw[0]), isDigit(raw[1]) else {
                if marked { throw VaultError.kitDamaged }
                continue   // words around hand-typed lines
            }
            let n = Int(raw[0] - UInt8(ascii: "0")) * 10 + Int(raw[1] - UInt8(ascii: "0"))
            guard n >= 1, n <= lineCount else { problems.append((n, .noSuchLine)); continue }
            if bodies[n] != nil { problems.append((n, .repeated)); continue }
            let groups = typed[index].split { separators.contains($0) }.map(Array.init)
            switch check(line: n, raw: raw, groups: groups) {
            case .success(let body): bodies[n] = body
            case .failure(let problem): bodies[n] = []; problems.append((n, problem)); failed[n] = raw
            }
        }
        if bodies.dropFirst().allSatisfy({ $0 == nil }) { throw VaultError.kitDamaged }
        for n in 1...lineCount where bodies[n] == nil { problems.append((n, .missing)) }
        if let first = problems.min(by: { $0.line < $1.line }) {
            // Only the reported line is searched for its typo (up to 620 checksums).
            if case .checksum = first.problem, let raw = failed[first.line] {
                let body = Base32.normalise(raw[2..<(raw.count - 2)]), sum = Base32.normalise(raw[(raw.count - 2)...])
                throw VaultError.kitLine(line: first.line, problem: suspects(line: first.line, body: body, sum: sum))
            }
            throw VaultError.kitLine(line: first.line, problem: first.problem)
        }
        guard let payload = Base32.decode(bodies.dropFirst().flatMap { $0 ?? [] }) else {
            throw VaultError.kitDamaged
        }
        return payload
    }

    /// What is wrong with one line as typed (`kitLine`, with the group to
    /// check where one can be told), or nil when it is right or is not a
    /// numbered line at all (BEGIN, END, words around): for checking each
    /// line as it is typed, not after all of them (issue 43, item 12).
    public static func problem(inLine line: String) -> VaultError? {
        let separators: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "-")]
        let raw = Array(line.utf8.filter { !separators.contains($0) })
        guard raw.count >= 2, isDigit(raw[0]), isDigit(raw[1]) else { return nil }
        let n = Int(raw[0] - UInt8(ascii: "0")) * 10 + Int(raw[1] - UInt8(ascii: "0"))
        guard n >= 1, n <= lineCount else { return .kitLine(line: n, problem: .noSuchLine) }
        let groups = Array(line.utf8).split { separators.contains($0) }.map(Array.init)
        switch check(line: n, raw: raw, groups: groups) {
        case .success: return nil
        case .failure(.checksum):
            let body = Base32.normalise(raw[2..<(raw.count - 2)]), sum = Base32.normalise(raw[(raw.count - 2)...])
            return .kitLine(line: n, problem: suspects(line: n, body: body, sum: sum))
        case .failure(let problem): return .kitLine(line: n, problem: problem)
        }
    }

    /// `text` with every line numbered `n` dropped and `line` (typed again,
    /// with or without its number) put in its place, before the END line if
    /// there is one: what `kit recover -` does with a line typed again.
    public static func replacingLine(_ n: Int, in text: String, with line: String) -> String {
        let number = Array((n < 10 ? "0\(n)" : "\(n)").utf8)
        let separators: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "-")]
        func squeezedLine(_ l: Substring) -> [UInt8] { Array(l.utf8.filter { !separators.contains($0) }) }
        var lines = text.split(whereSeparator: \.isNewline).filter { !squeezedLine($0).starts(with: number) || squeezedLine($0).count < 3 }
        let typed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        let numbered = squeezedLine(Substring(typed)).starts(with: number) ? typed : String(decoding: number, as: UTF8.self) + " " + typed
        let endLine = squeezed(end)
        let at = lines.firstIndex { squeezedLine($0) == endLine } ?? lines.count
        lines.insert(Substring(numbered), at: at)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The characters a line `n` of a whole kit carries.
    static func expectedLength(line n: Int) -> Int {
        let total = (RecoveryKit.length * 8 + 4) / 5
        return n < lineCount ? lineLength : total - lineLength * (lineCount - 1)
    }

    /// One numbered line: its body, or what is wrong with it. `groups` are
    /// the words as typed (number, groups of four, checksum), used only to
    /// point at the group to look at.
    private static func check(line n: Int, raw: [UInt8], groups: [[UInt8]]) -> Result<[UInt8], KitLineProblem> {
        // Group g (1-based) of the typed words, if they were typed as the kit shows them.
        let typedGroups = groups.count >= 3 ? Array(groups[1..<(groups.count - 1)]) : []
        let want = expectedLength(line: n)
        guard raw.count >= 4 else { return .failure(.wrongLength(have: 0, want: want, group: nil)) }
        let body = Base32.normalise(raw[2..<(raw.count - 2)]), sum = Base32.normalise(raw[(raw.count - 2)...])
        if let bad = body.firstIndex(where: { !alphabet.contains($0) }) {
            return .failure(.badCharacter(group: bad / 4 + 1))
        }
        if body.count != want {
            // The typed group whose length is off, if the spacing says so.
            let expectedGroups = (0..<((want + 3) / 4)).map { min(4, want - $0 * 4) }
            var group: Int?
            if typedGroups.count == expectedGroups.count {
                group = expectedGroups.indices.first { typedGroups[$0].count != expectedGroups[$0] }.map { $0 + 1 }
            }
            return .failure(.wrongLength(have: body.count, want: want, group: group))
        }
        guard sum.count == 2, sum.allSatisfy(alphabet.contains), sum == checksum(line: UInt8(n), body) else {
            return .failure(.checksum(groups: [], orChecksum: false))   // decode looks for the groups if this line is the one reported
        }
        return .success(body)
    }

    /// Where a single typo would explain a checksum that does not match:
    /// every group in which changing one character makes it match, and
    /// whether the checksum's own characters are one change away. A 10-bit
    /// checksum also matches some wrong changes, so there may be several;
    /// the true one is always among them (issue 43, item 12: "check the
    /// line" said too little when two groups matched).
    private static func suspects(line n: Int, body: [UInt8], sum: [UInt8]) -> KitLineProblem {
        var groups = Set<Int>()
        var trial = body
        for i in body.indices where !groups.contains(i / 4 + 1) {
            for c in alphabet where c != body[i] {
                trial[i] = c
                if checksum(line: UInt8(n), trial) == sum { groups.insert(i / 4 + 1); break }
            }
            trial[i] = body[i]
        }
        let expected = checksum(line: UInt8(n), body)
        let orChecksum = sum.count == expected.count && zip(sum, expected).filter { $0 != $1 }.count == 1
        return .checksum(groups: groups.sorted(), orChecksum: orChecksum)
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private static func digit(_ d: Int) -> UInt8 { UInt8(ascii: "0") + UInt8(d) }

    /// A marker line as `decode` compares it: without spaces or dashes.
    private static func squeezed(_ line: String) -> [UInt8] {
        Array(line.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "-") })
    }

    static func checksum(line n: UInt8, _ chars: [UInt8]) -> [UInt8] {
        // SHA-256 fails only if OpenSSL cannot allocate: the checksum then fails to match, never matches wrongly.
        let h = (try? SHA256.hash(checksumLabel + [n] + chars)) ?? [0, 0]
        let bits = Int(h[0]) << 2 | Int(h[1]) >> 6
        return [alphabet[bits >> 5], alphabet[bits & 31]]
    }

    /// The passphrase `--generate` would have printed, if `typed` is one
    /// typed loosely: ignoring ASCII case, spaces, tabs and dashes (and
    /// reading 0/1/8 as O/I/B, as the lines are read), 26 base32 characters
    /// in canonical form "ABCD-EFGH-…-YZ". nil if `typed` is not of that
    /// shape or is already canonical. A generated passphrase is the only
    /// kind a kit ever showed, and its canonical form is itself, so this
    /// changes nothing for any passphrase that opened an older kit; a chosen
    /// passphrase that merely looks like one is still tried as typed.
    public static func canonicalPassphrase(_ typed: SecretBytes) throws -> SecretBytes? {
        let length = 26, groupLength = 4
        let canonicalLength = length + (length - 1) / groupLength
        guard typed.count <= 4 * canonicalLength else { return nil }
        let out = try SecretBytes(count: canonicalLength)
        let ok = typed.withUnsafeBytes { t in out.withUnsafeMutableBytes { o -> Bool in
            var n = 0, differs = t.count != canonicalLength
            for c in t where c != UInt8(ascii: " ") && c != UInt8(ascii: "\t") && c != UInt8(ascii: "-") {
                guard n < length, let up = Base32.normalise([c]).first, alphabet.contains(up) else { return false }
                let at = n + n / groupLength
                if at > 0 && n % groupLength == 0 { o[at - 1] = UInt8(ascii: "-") }
                o[at] = up
                n += 1
            }
            if n != length { return false }
            for i in 0..<canonicalLength where !differs && t[i] != o[i] { differs = true }
            return differs
        } }
        return ok ? out : nil
    }

    /// A random passphrase of 26 base32 characters (130 bits) in groups of
    /// four: easy to copy by hand, and what `kit export --generate` prints.
    public static func generatedPassphrase() -> [UInt8] {
        var random = SecureRandom.bytes(17)
        var chars = Base32.encode(random)
        SecureZero.zero(&random)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for (i, c) in chars.prefix(26).enumerated() { if i > 0 && i % 4 == 0 { out.append(UInt8(ascii: "-")) }; out.append(c) }
        SecureZero.zero(&chars)
        return out
    }
}

// libFuzzer target: the recovery kit's armor and payload parsers. Built by
// `make fuzz`.
//
// Input: mode (1) || rest.
//   mode bit 0 = 0: rest is text for KitArmor.decode, then RecoveryKit(parsing:).
//   mode bit 0 = 1: the first 116 bytes of rest (cycled) are a payload,
//     armored, then edited by (op, line, position) triples from what follows:
//     op 0 lower-case a numbered line, 1 insert a space, 2 a tab, 3 a '-'
//     (into a numbered line), 4 write O, I, B as 0, 1, 8 in a numbered line,
//     5 add an empty line, 6 end lines with "\r\n", 7 add text around the
//     block: all of which FORMAT.md says a reader ignores; 8 drop a line,
//     9 duplicate one, which it must notice.
// Traps on: any error but kitDamaged; a decoded kit that does not serialise
// back to its payload; an edited kit that decodes to another payload, or
// fails to decode when only ignorable edits were made.
import VaultCore

/// `precondition` whose message survives the -O fuzz build (which drops it).
private func require(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { fatalError(message()) } }

private func decode(_ text: String) -> [UInt8]? {
    do { return try KitArmor.decode(text) } catch VaultError.kitDamaged { return nil } catch VaultError.kitLine { return nil } catch {
        fatalError("KitArmor.decode threw \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKit(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = input.first else { return 0 }
    let rest = input.dropFirst()
    if mode & 1 == 0 {
        guard let payload = decode(String(decoding: rest, as: UTF8.self)) else { return 0 }
        do {
            let kit = try RecoveryKit(parsing: payload)
            require(kit.bytes == payload, "RecoveryKit parse/serialise mismatch")
            require(decode(KitArmor.armor(payload)) == payload, "a decoded kit does not round-trip through armor")
        } catch VaultError.kitDamaged {} catch VaultError.kitLine {} catch { fatalError("RecoveryKit(parsing:) threw \(error)") }
        return 0
    }
    let payload = (0..<RecoveryKit.length).map { rest.isEmpty ? UInt8($0) : rest[rest.startIndex + $0 % rest.count] }
    var lines = KitArmor.armor(payload).split(separator: "\n").map(String.init)
    var damaged = false, newline = "\n"
    let edits = Array(rest.dropFirst(RecoveryKit.length))
    for e in stride(from: 0, to: edits.count - 2, by: 3) {
        let (op, n, at) = (edits[e] % 10, Int(edits[e + 1]), Int(edits[e + 2]))
        let numbered = lines.indices.filter { lines[$0].first?.isNumber == true }
        guard !numbered.isEmpty else { break }
        let l = numbered[n % numbered.count]
        func insert(_ c: Character) { let s = lines[l]; lines[l].insert(c, at: s.index(s.startIndex, offsetBy: at % (s.count + 1))) }
        switch op {
        case 0: lines[l] = lines[l].lowercased()
        case 1: insert(" ")
        case 2: insert("\t")
        case 3: insert("-")
        case 4: lines[l] = String(lines[l].prefix(2)) + lines[l].dropFirst(2).map { ["O": "0", "I": "1", "B": "8"][$0] ?? $0 }
        case 5: lines.insert("", at: n % (lines.count + 1))
        case 6: newline = "\r\n"
        case 7: lines.insert(n % 2 == 0 ? "kit for vault \(at)" : "  ", at: n % 2 == 0 ? 0 : lines.count)
        case 8: lines.remove(at: l); damaged = true
        default: lines.insert(lines[l], at: l); damaged = true
        }
    }
    let decoded = decode(lines.joined(separator: newline))
    require(decoded == payload || (damaged && decoded == nil),
                 decoded == nil ? "a kit with only ignorable edits failed to decode" : "an edited kit decoded to another payload")
    return 0
}

import Foundation
import Testing
@testable import VaultMove

/// `vault move receive --words` and a sender typing the short code: the
/// built binary on both sides over 127.0.0.1 (docs/FORMAT.md, "Short code
/// (version 3)"). Exit codes: 0 moved; 14 on both sides for a wrong code
/// (the receiver stops: the code had one attempt); 14 for a word not on
/// the list, before the sender connects (the code is not spent).
@Suite("Move command, short code", .serialized)
struct MoveShortCodeCommandTests {
    typealias M = MoveCommandTests

    /// `move receive --words` into `target`; returns it with its code text.
    static func receiver(_ v: VaultFixture, into target: String, _ extra: [String] = []) throws -> (Background, String) {
        let codeFile = v.path + "/code-\(UInt32.random(in: 0...UInt32.max))"
        let p = try Background(["--password-file", v.passwordFile, "move", "receive", "--words", "--into", target,
                                "--listen", "127.0.0.1:0", "--code-file", codeFile] + extra,
                               environment: v.environment(), cwd: v.path)
        return (p, try M.waitForFile(codeFile).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Every path under `root` with its kind and size (and its bytes for
    /// files): what "nothing was changed" compares.
    static func snapshot(_ root: String) throws -> [String: String] {
        var out: [String: String] = [:]
        guard let walk = FileManager.default.enumerator(atPath: root) else { return out }
        for case let path as String in walk {
            let full = root + "/" + path
            let a = try FileManager.default.attributesOfItem(atPath: full)
            let kind = a[.type] as? FileAttributeType
            var entry = "\(kind?.rawValue ?? "?") \(a[.size] as? Int ?? -1) \(a[.posixPermissions] as? Int ?? -1)"
            if kind == .typeRegular { entry += " " + (try Data(contentsOf: URL(fileURLWithPath: full))).base64EncodedString() }
            out[path] = entry
        }
        return out
    }

    @Test func aMoveWithTheShortCode() throws {
        let v = try M.populated()
        let before = try v.listed().sorted { $0.name < $1.name }
        let target = v.path + "/new"
        let (receiver, code) = try Self.receiver(v, into: target)
        defer { receiver.killGroup() }
        let parts = code.split(separator: " ")
        #expect(parts.count == 2 && parts[0] == "127.0.0.1" && parts[1].split(separator: "-").count == 4, "\(code)")
        // Typed loosely: upper case, spaces for dashes.
        let typed = try v.sandbox.file("typed", "127.0.0.1  " + parts[1].uppercased().replacingOccurrences(of: "-", with: " ") + "\n")
        let s = try M.send(v, codeFile: typed)
        #expect(s.status == 0, "send: \(s.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        #expect(M.sas(s.stderr) != nil && M.sas(s.stderr) == M.sas(receiver.stderr))
        #expect(receiver.stderr.contains("the sender erased its copy"))
        let r = try CLIHarness.run(["--vault", target, "--password-file", v.passwordFile, "list", "--json"],
                                   environment: v.environment(), cwd: v.path)
        #expect(r.status == 0, "list: \(r.stderr)")
        #expect(try ListedItem.parse(r.stdout).sorted { $0.name < $1.name } == before)
    }

    /// A wrong word (on the list, so it reaches the handshake): both sides
    /// fail with one clear line and exit 17 (a code of its own, not 14's
    /// tampering), the receiver stops listening, nothing changed on the
    /// receiver's side, the sender keeps its vault. The code is proven
    /// before the password: a wrong password too still reads as the code
    /// refused (issue 43, item 9: before, the password and a check of every
    /// byte came first).
    @Test func aWrongCodeFailsBothSidesAndChangesNothing() throws {
        let v = try M.populated()
        let home = v.path + "/home"
        try FileManager.default.createDirectory(atPath: home + "/other", withIntermediateDirectories: true)
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: home + "/other/file"))
        let before = try Self.snapshot(home)
        let (receiver, code) = try Self.receiver(v, into: home + "/vault")
        defer { receiver.killGroup() }
        var words = code.split(separator: "-").map(String.init)
        let last = words[3]
        words[3] = last == "zebra" ? "velvet" : "zebra"
        let wrong = try v.sandbox.file("wrong", words.joined(separator: "-") + "\n")
        let s = try v.run(["move", "send", "--code-file", wrong], password: try v.sandbox.file("wrong-password", "not it\n"), timeout: 60)
        #expect(s.status == 17, "\(s.stderr)")
        #expect(!s.stderr.contains("checked") && !s.stderr.contains("wrong password"), "\(s.stderr)")
        #expect(s.stderr.contains("vault: the receiver did not accept this short code (a wrong word or number, or someone in between); it has stopped, so the code is spent\n"), "\(s.stderr)")
        #expect(receiver.wait(timeout: 30) == 17, "\(receiver.stderr)")
        #expect(receiver.stderr.contains("tried a wrong short code, so this code is spent; stopped listening\nhint: nothing was received"), "\(receiver.stderr)")
        #expect(try Self.snapshot(home) == before)
        try M.expectIntact(v)
        // The right code now finds no one: the attempt was the only one.
        let right = try v.sandbox.file("right", code + "\n")
        let again = try M.send(v, codeFile: right)
        #expect(again.status == 1 && again.stderr.contains("cannot connect"), "\(again.stderr)")
        try M.expectIntact(v)
    }

    /// A word not on the list is named before anything is sent: the
    /// receiver never sees a connection, and the same code still works.
    @Test func aWordNotOnTheListDoesNotSpendTheCode() throws {
        let v = try M.populated()
        let target = v.path + "/new"
        let (receiver, code) = try Self.receiver(v, into: target, ["--no-verify"])
        defer { receiver.killGroup() }
        var words = code.split(separator: "-").map(String.init)
        let second = words[2]
        words[2] = second + "q"  // no word ends in "q"
        let typo = try v.sandbox.file("typo", words.joined(separator: "-") + "\n")
        let s = try M.send(v, codeFile: typo)
        #expect(s.status == 14)
        #expect(s.stderr.hasPrefix("vault: that is not a valid move code: word 2 ('\(second)q') is not in the word list\n"), "\(s.stderr)")
        #expect(receiver.poll() == nil, "the receiver still waits")
        let right = try v.sandbox.file("right", code + "\n")
        #expect(try M.send(v, codeFile: right).status == 0)
        #expect(receiver.wait(timeout: 30) == 0, "\(receiver.stderr)")
    }

    /// On a terminal the short code is typed at the same prompt as a long
    /// one; a word not on the list is asked again alone.
    @Test func aMisspelledWordIsAskedAgainOnATerminal() throws {
        let v = try M.populated()
        let (receiver, code) = try Self.receiver(v, into: v.path + "/new")
        defer { receiver.killGroup() }
        var words = code.split(separator: "-").map(String.init)
        let third = words[3]
        words[3] = "qq" + third  // no word starts with "qq"
        let r = try PTYDriver.run(["--vault", v.dir, "move", "send"],
                                  steps: [.expect("move code (from 'vault move receive'): "), .send(words.joined(separator: "-") + "\n"),
                                          .expect("word 3 ('qq\(third)') is not in the word list: type that word again"),
                                          .expect("word 3: "), .send(third + "\n"),
                                          .expect("? [y/N] "), .send("y\n"),
                                          .expect("password: "), .send(v.password + "\n"), .expect("erased the vault")],
                                  environment: v.environment(), timeout: 60)
        #expect(r.failed_step == nil, "\(r.text)")
        #expect(r.exit == 0)
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
    }
}

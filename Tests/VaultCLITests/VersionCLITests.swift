import Foundation
import Testing

/// Versions through the built binary: made by add (absorbed in add order)
/// and by open saving a change; read by number and by date; trimmed by
/// forget; kept whole by rename, rekey, kit recover and move; dropped whole
/// by remove (which asks on a terminal).
@Suite struct VersionCLITests {
    let v: VaultFixture
    init() throws { v = try VaultFixture() }

    /// Adds `contents` under `name`, one `vault add` each, in order.
    func addVersions(_ name: String, _ contents: [String]) throws {
        for c in contents {
            try v.write(name, Array(c.utf8))
            let r = try v.add(["add", name])
            #expect(r.status == 0, "add: \(r.stderr)")
        }
    }

    func versionsJSON(_ name: String) throws -> [[String: Any]] {
        let r = try v.run(["list", "--versions", name, "--json"])
        #expect(r.status == 0, "list --versions: \(r.stderr)")
        return try JSONObject.parse(r.stdout)["items"] as? [[String: Any]] ?? []
    }

    func numbers(_ name: String) throws -> [Int] { try versionsJSON(name).compactMap { $0["version"] as? Int } }

    @Test func addsBecomeVersionsReadByNumberAndDate() throws {
        try addVersions("notes.txt", ["one", "two", "three", "four"])
        let list = try v.run(["list"])
        #expect(list.status == 0)
        // The header, the item once, the totals.
        #expect(list.stdoutText.split(separator: "\n").count == 3)
        #expect(list.stdoutText.contains("  file                dropped-in         4  notes.txt\n"), "\(list.stdoutText)")
        let json = try JSONObject.parse(try v.run(["list", "--json"]).stdout)["items"] as? [[String: Any]]
        #expect(json?.count == 1 && json?.first?["versions"] as? Int == 4 && json?.first?["version"] as? Int == 4)
        #expect(try numbers("notes.txt") == [1, 2, 3, 4])
        let lines = try v.run(["list", "--versions", "notes.txt"]).stdoutText.split(separator: "\n").dropFirst().dropLast()
        #expect(lines.count == 4 && lines.first?.hasPrefix("      1        3 B ") == true && lines.last?.hasPrefix("      4        4 B ") == true,
                "\(lines)")

        for (n, text) in ["one", "two", "three", "four"].enumerated() {
            #expect(try v.run(["get", "notes.txt", "--version", String(n + 1)]).stdoutText == text)
        }
        #expect(try v.get("notes.txt").stdoutText == "four")
        // By date: every version was added before now; nothing before 1970.
        #expect(try v.run(["get", "notes.txt", "--at", "2999-01-01"]).stdoutText == "four")
        #expect(try v.run(["get", "notes.txt", "--at", "@\(Int(Date().timeIntervalSince1970) + 5)"]).stdoutText == "four")
        let early = try v.run(["get", "notes.txt", "--at", "1970-01-01T00:00:00Z"])
        #expect(early.status == 16 && early.stderr.hasPrefix("vault: item 'notes.txt' has no version at that time\n"))
        let missing = try v.run(["get", "notes.txt", "--version", "9"])
        #expect(missing.status == 16 && missing.stderr.hasPrefix("vault: item 'notes.txt' has no version 9\n"))
        #expect(try v.run(["get", "nope", "--version", "1"]).status == 16)

        // Usage errors before any I/O.
        for bad in [["--version", "0"], ["--version", "x"], ["--at", "yesterday"], ["--at", "2026-13-01"],
                    ["--version", "1", "--at", "2026-01-01"]] {
            let r = try v.run(["get", "notes.txt"] + bad)
            #expect(r.status == 2, "\(bad): \(r.stderr)")
        }
        // `vault --version` before a command still prints the version.
        #expect(try v.add(["--version"]).stdoutText.hasPrefix("vault "))

        // restore picks the same version for each name.
        try addVersions("todo.txt", ["a", "b"])
        let out = v.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let r = try v.run(["restore", "notes.txt", "todo.txt", "--version", "2", "--to", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try String(contentsOfFile: out + "/notes.txt", encoding: .utf8) == "two")
        #expect(try String(contentsOfFile: out + "/todo.txt", encoding: .utf8) == "b")
    }

    /// check counts items and their versions apart (it used to call every
    /// version an item).
    @Test func checkCountsItemsAndVersions() throws {
        try addVersions("notes.txt", ["one", "two", "three"])
        try addVersions("other.txt", ["only"])
        let text = try v.run(["check", "--read-data"])
        #expect(text.status == 0)
        #expect(text.stderr.contains("no problems found (2 items, 4 versions"), "\(text.stderr)")
        let json = try JSONObject.parse(try v.run(["check", "--json"]).stdout)
        #expect(json["items_checked"] as? Int == 2 && json["versions_checked"] as? Int == 4)
    }

    @Test func dateFormsNameTheirLastSecond() throws {
        try addVersions("d.txt", ["x"])
        let added = try versionsJSON("d.txt").first?["added"] as? String ?? ""
        // "2026-12-01T02:33:10Z": the same minute in UTC includes it; the minute before does not.
        let minute = String(added.prefix(16))
        #expect(try v.run(["get", "d.txt", "--at", minute + "Z"]).stdoutText == "x")
        let before = try v.run(["get", "d.txt", "--at", String(added.prefix(14)) + "00:00Z"])   // the hour's start
        #expect(before.status == 16 || added.dropFirst(14).hasPrefix("00:00"))
        let day = String(added.prefix(10)), clock = String(added.dropFirst(11).prefix(8))
        #expect(try v.run(["get", "d.txt", "--at", day], ["TZ": "UTC0"]).stdoutText == "x")
        #expect(try v.run(["get", "d.txt", "--at", day + " " + clock], ["TZ": "UTC0"]).stdoutText == "x")
        // Local time: twelve hours east (POSIX "EAST-12"), the same wall-clock
        // time is an earlier instant, before the add; twelve hours west, later.
        #expect(try v.run(["get", "d.txt", "--at", day + " " + clock], ["TZ": "EAST-12"]).status == 16)
        #expect(try v.run(["get", "d.txt", "--at", day + "T" + clock], ["TZ": "WEST+12"]).stdoutText == "x")
    }

    /// Dates are checked against the calendar: 2026-11-31 was accepted and
    /// rolled into December (mktime normalises what it is given).
    @Test func datesOutsideTheCalendarAreUsageErrors() throws {
        try addVersions("d.txt", ["x"])
        for bad in ["2026-11-31", "2026-02-29", "1900-02-29", "2026-04-31", "2026-06-31", "2026-13-01", "2026-00-10",
                    "2026-11-00", "2026-11-32", "2026-11-01 24:00", "2026-11-01 23:60", "2026-11-01 12:00:60",
                    "2026-02-29T12:00Z", "2026-11-31 00:00"] {
            let r = try v.run(["get", "d.txt", "--at", bad])
            #expect(r.status == 2 && r.stdout.isEmpty, "\(bad): \(r.stderr)")
            #expect(r.stderr.hasPrefix("vault: '\(bad)' is not a date: use YYYY-MM-DD, 'YYYY-MM-DD HH:MM[:SS]' or @UNIXSECONDS\n"),
                    "\(bad): \(r.stderr)")
        }
        // Leap days of leap years, month ends, the last minute and second: accepted
        // (in the future, the current version; long past, none yet: exit 16).
        for good in ["2028-02-29", "2400-02-29", "2999-12-31 23:59", "2998-04-30 23:59:59", "2999-01-31T00:00Z"] {
            #expect(try v.run(["get", "d.txt", "--at", good]).stdoutText == "x", "\(good)")
        }
        for past in ["2000-02-29", "2024-02-29 12:00", "1999-11-30"] {
            let r = try v.run(["get", "d.txt", "--at", past])
            #expect(r.status == 16, "\(past): \(r.stderr)")
        }
    }

    @Test func openSavingAChangeMakesAVersion() throws {
        try addVersions("n.txt", ["draft"])
        let r = try v.run(["open", "n.txt", "--with", "sed -i s/draft/final/"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try numbers("n.txt") == [1, 2])
        #expect(try v.get("n.txt").stdoutText == "final")
        #expect(try v.run(["get", "n.txt", "--version", "1"]).stdoutText == "draft")
        #expect(try versionsJSON("n.txt").last?["origin"] as? String == "unlocked")
        // An unchanged copy saves nothing.
        #expect(try v.run(["open", "n.txt", "--with", "true"]).status == 0)
        #expect(try numbers("n.txt") == [1, 2])
    }

    @Test func forgetKeepsWhatTheRulesSayAndDeletesTheRest() throws {
        try addVersions("a.txt", ["1", "2", "3", "4", "5"])
        try addVersions("b.txt", ["1", "2"])
        try addVersions("c.txt", ["only"])
        let blobs = { try v.filesInVault().filter { $0.hasPrefix("items/") }.count }
        _ = try v.listed()   // absorbs the drop-ins
        #expect(try blobs() == 8)

        let dry = try v.run(["forget", "--keep-last", "2", "--dry-run"])
        #expect(dry.status == 0)
        #expect(dry.stderr == """
            vault: would forget 'a.txt' version 1
            vault: would forget 'a.txt' version 2
            vault: would forget 'a.txt' version 3
            vault: would forget 3 versions of 1 item

            """)
        #expect(try blobs() == 8 && numbers("a.txt") == [1, 2, 3, 4, 5])

        let one = try v.run(["forget", "a.txt", "--keep-last", "3"])
        #expect(one.status == 0 && one.stderr.hasSuffix("vault: forgot 2 versions of 1 item\n"), "\(one.stderr)")
        #expect(try numbers("a.txt") == [3, 4, 5] && numbers("b.txt") == [1, 2] && blobs() == 6)

        // All added today: one daily version each, and the last one.
        let all = try v.run(["forget", "--keep-daily", "1"])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(try numbers("a.txt") == [5] && numbers("b.txt") == [2] && numbers("c.txt") == [1] && blobs() == 3)
        #expect(try v.get("a.txt").stdoutText == "5")
        // Numbers are not reused: the next add is version 6.
        try addVersions("a.txt", ["6"])
        #expect(try numbers("a.txt") == [5, 6])
        #expect(try v.run(["check", "--read-data"]).status == 0)

        for bad in [[String](), ["--keep-last", "0"], ["--keep-daily", "x"]] {
            #expect(try v.run(["forget"] + bad).status == 2, "\(bad)")
        }
        #expect(try v.run(["forget", "nope", "--keep-last", "1"]).status == 16)
    }

    @Test func renameKeepsHistoryAndRemoveTakesItAll() throws {
        try addVersions("old.txt", ["1", "2", "3"])
        #expect(try v.run(["rename", "old.txt", "new.txt"]).status == 0)
        #expect(try numbers("new.txt") == [1, 2, 3])
        #expect(try v.run(["get", "new.txt", "--version", "1"]).stdoutText == "1")
        #expect(try v.run(["list", "--versions", "old.txt"]).status == 16)
        // No terminal: scripts are not asked.
        #expect(try v.run(["remove", "new.txt"]).status == 0)
        #expect(try v.listed() == [])
        #expect(try v.filesInVault().filter { $0.hasPrefix("items/") } == [])
    }

    @Test func removeAsksOnATerminalWhenThereIsHistory() throws {
        try addVersions("h.txt", ["1", "2"])
        let args = ["--vault", v.dir, "--password-file", v.passwordFile, "remove", "h.txt"]
        let no = try PTYDriver.run(args, steps: [.expect("remove 1 item: 'h.txt' (2 versions), with every version? [y/N] "), .send("n\n")],
                                   environment: v.environment())
        #expect(no.failed_step == nil && no.exit == 1, "\(no.text)")
        #expect(no.text.contains("vault: remove cancelled; nothing changed"))
        #expect(try numbers("h.txt") == [1, 2])
        let yes = try PTYDriver.run(args, steps: [.expect("with every version? [y/N] "), .send("y\n")],
                                    environment: v.environment())
        #expect(yes.failed_step == nil && yes.exit == 0, "\(yes.text)")
        #expect(try v.listed() == [])
        // --yes skips the question; a single version is never asked about.
        try addVersions("h.txt", ["1", "2"])
        try addVersions("s.txt", ["1"])
        let quiet = try PTYDriver.run(args + ["s.txt", "--yes"], steps: [], environment: v.environment())
        #expect(quiet.exit == 0 && !quiet.text.contains("[y/N]"), "\(quiet.text)")
        #expect(try v.listed() == [])
    }

    @Test func versionsSurviveRekeyAndKitRecover() throws {
        try addVersions("k.txt", ["1", "2", "3"])
        #expect(try v.run(["forget", "--keep-last", "2"]).status == 0)
        #expect(try v.run(["rekey", "--yes"]).status == 0)
        #expect(try numbers("k.txt") == [2, 3])
        #expect(try v.run(["get", "k.txt", "--version", "2"]).stdoutText == "2")

        let kp = try v.write("kp", Array("kit passphrase 123\n".utf8), mode: 0o600)
        let kit = v.path + "/kit.txt"
        #expect(try v.run(["kit", "export", "-o", kit, "--passphrase-file", kp, "--kdf-memory", "1", "--kdf-passes", "1"]).status == 0)
        let fresh = try v.write("fresh", Array("recovered password\n".utf8), mode: 0o600)
        let r = try v.add(["kit", "recover", kit, "--passphrase-file", kp, "--new-password-file", fresh])
        #expect(r.status == 0, "\(r.stderr)")
        let after = try v.run(["list", "--versions", "k.txt", "--json"], password: fresh)
        let items = try JSONObject.parse(after.stdout)["items"] as? [[String: Any]]
        #expect(items?.compactMap { $0["version"] as? Int } == [2, 3])
        #expect(try v.run(["get", "k.txt", "--version", "3"], password: fresh).stdoutText == "3")
    }

    @Test func versionsMoveWithTheVault() throws {
        try addVersions("m.txt", ["1", "2"])
        #expect(try numbers("m.txt") == [1, 2])
        let target = v.path + "/moved"
        let (receiver, _, codeFile) = try MoveCommandTests.receiver(v, into: target)
        defer { receiver.killGroup() }
        let s = try MoveCommandTests.send(v, codeFile: codeFile)
        #expect(s.status == 0, "send: \(s.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        let r = try CLIHarness.run(["--vault", target, "--password-file", v.passwordFile, "get", "m.txt", "--version", "1"],
                                   environment: v.environment(), cwd: v.path)
        #expect(r.status == 0 && r.stdoutText == "1", "\(r.stderr)")
    }

    /// The reference reader (written from FORMAT.md) reads the versions too.
    @Test func theReferenceReaderSeesEveryVersion() throws {
        try addVersions("r.txt", ["alpha", "beta", "gamma"])
        #expect(try v.run(["forget", "--keep-last", "2"]).status == 0)
        let reader = CLIHarness.packageRoot + "/scripts/reference/vault_read.py"
        func python(_ args: [String]) throws -> CLIHarness.Result {
            try CLIHarness.run(["python3", reader] + args, environment: v.environment(["PYTHONDONTWRITEBYTECODE": "1"]),
                               cwd: v.path, timeout: 60, executable: "/usr/bin/env")
        }
        let versions = try python(["versions", v.dir, v.passwordFile, "r.txt"])
        #expect(versions.status == 0, "\(versions.stderr)")
        #expect(versions.stdoutText.split(separator: "\n").map { $0.split(separator: "\t")[0] } == ["2", "3"])
        #expect(try python(["get", v.dir, v.passwordFile, "r.txt", "2"]).stdoutText == "beta")
        #expect(try python(["get", v.dir, v.passwordFile, "r.txt"]).stdoutText == "gamma")
        #expect(try python(["get", v.dir, v.passwordFile, "r.txt", "1"]).status == 1)
        #expect(try python(["list", v.dir, v.passwordFile]).stdoutText == "r.txt\t5\tfile\tdropped-in\n")
    }
}

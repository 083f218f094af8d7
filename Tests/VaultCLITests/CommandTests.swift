import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every command end to end through the built binary, and every exit code
/// of the table that a command can reach, with the exact first line of stderr.
@Suite struct CommandTests {
    let v: VaultFixture
    init() throws { v = try VaultFixture() }

    // MARK: init

    @Test func initCreatesAPrivateVault() throws {
        let w = try VaultFixture(create: false)
        let r = try w.run(VaultFixture.cheapInit)
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "vault: created a vault at '\(w.dir)'")
        #expect(lines.dropFirst().first == "vault: argon2id: 1 MiB, 1 pass, 1 lane")
        #expect(lines.contains("vault: warning: these Argon2id settings are weak: for tests and demos only"))
        let fm = FileManager.default
        for (rel, mode) in [("", 0o700), ("/items", 0o700), ("/inbox", 0o700), ("/vault.header", 0o600), ("/manifest", 0o600)] {
            let attributes = try fm.attributesOfItem(atPath: w.dir + rel)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == mode, "\(rel)")
        }
        // A version-4 header with the X-Wing key, one password slot "password" and its counter (docs/FORMAT.md).
        #expect(try fm.attributesOfItem(atPath: w.dir + "/vault.header")[.size] as? NSNumber == 1425)
        // The printed fingerprint is the one info shows.
        let printed = lines.first { $0.hasPrefix("vault: public key fingerprint: ") }?.dropFirst(31)
        #expect(printed.map(String.init) == (try w.info()["public_key_fingerprint"] as? String))
        #expect(try w.listed() == [])
    }

    @Test func initOnAnExistingVaultExits15AndChangesNothing() throws {
        let header = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))
        let r = try v.run(VaultFixture.cheapInit)
        #expect(r.status == 15)
        #expect(r.stderr == "vault: a vault already exists at '\(v.dir)'\n"
                + "hint: use it ('vault info' describes it), or make a new one elsewhere with --vault DIR\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header")) == header)
    }

    /// The first-week texts of issue 29, item 15: init says once what a lost
    /// password means and names the kit; info names slots by kind; remote
    /// list aligns its columns.
    @Test func initNamesTheKitInfoNamesSlotKindsRemoteListAligns() throws {
        let w = try VaultFixture(create: false)
        let made = try w.run(VaultFixture.cheapInit)
        #expect(made.status == 0)
        #expect(made.stderr.contains("vault: a lost password means lost data: nobody can reset it\n"
                                     + "hint: 'vault kit export' makes a recovery kit"), "\(made.stderr)")
        let info = try w.add(["info"]).stdoutText
        #expect(info.contains("\nkey slots: 1 (password slot 'password')\n"), "\(info)")
        let key = try w.write("laptop.key", randomBytes(32))
        #expect(try w.run(["key", "add", "laptop", "--new-key-file", key]).status == 0)
        #expect(try w.add(["info"]).stdoutText.contains("\nkey slots: 2 (password slot 'password'; key-file slot 'laptop')\n"))

        #expect(try w.run(["remote", "add", "usb", w.path + "/usb"]).status == 0)
        #expect(try w.run(["remote", "add", "offsite-copy", w.path + "/a/much/longer/target"]).status == 0)
        let list = try w.run(["remote", "list"]).stdoutText
        let pad = String(repeating: " ", count: "/a/much/longer/target".count - "/usb".count)
        // What `remote add` learned this machine may do there (issue 41).
        #expect(list == "usb           \(w.path)/usb\(pad)  (generation 0; this machine can delete the backups)\n"
                + "offsite-copy  \(w.path)/a/much/longer/target  (generation 0; this machine can delete the backups)\n", "\(list)")
        #expect(try w.add(["info"]).stdoutText.contains("\nremotes: 'usb' (this machine can delete the backups), 'offsite-copy' (this machine can delete the backups)\n"))
    }

    // MARK: add

    @Test func twoInputsUnderOneNameAreRefusedBeforeAnythingIsAdded() throws {
        try FileManager.default.createDirectory(atPath: v.path + "/a", withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: v.path + "/b", withIntermediateDirectories: false)
        try v.write("a/same.txt", Array("one".utf8))
        try v.write("b/same.txt", Array("two".utf8))
        let before = try v.filesInVault()
        let r = try v.add(["add", "a/same.txt", "b/same.txt"])
        #expect(r.status == 2)
        #expect(firstLine(r.stderr) == "vault: 'a/same.txt' and 'b/same.txt' would both be named 'same.txt'; add them one at a time, each with --name")
        #expect(try v.filesInVault() == before, "nothing was added")
    }

    @Test func addSeveralFilesAtOnceThenList() throws {
        try v.write("a.txt", Array("hello\n".utf8))
        try v.write("b.bin", [0, 1, 2, 255])
        try v.write("c", [])
        let r = try v.add(["add", "a.txt", "b.bin", "c"])
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "vault: added 'a.txt' (6 B)\nvault: added 'b.bin' (4 B)\nvault: added 'c' (0 B)\n")
        #expect(try v.info()["waiting_drop_ins"] as? Int == 3)
        let items = try v.listed()
        #expect(items.map(\.name) == ["a.txt", "b.bin", "c"])
        #expect(items.map(\.size) == [6, 4, 0])
        #expect(items.allSatisfy { $0.origin == "dropped-in" && $0.kind == "file" && $0.files == 1 })
        #expect(try v.info()["waiting_drop_ins"] as? Int == 0)
        #expect(try v.get("b.bin").stdout == [0, 1, 2, 255])
        #expect(try v.get("c").stdout == [])
    }

    @Test func addAbsolutePathIsNamedAfterItsLastComponentAndNameOverrides() throws {
        let path = try v.write("report-2024.txt", Array("numbers".utf8))
        #expect(try v.add(["add", path]).status == 0)
        #expect(try v.add(["add", path, "--name", "renamed.txt"]).status == 0)
        #expect(try v.listed().map(\.name) == ["renamed.txt", "report-2024.txt"])
    }

    @Test func addTheSameNameTwiceMakesAVersion() throws {
        try v.write("a.tar.gz", [1])
        #expect(try v.add(["add", "a.tar.gz"]).status == 0)
        #expect(try v.listed().map(\.name) == ["a.tar.gz"])
        try v.write("a.tar.gz", [2, 2], mode: 0o600)
        #expect(try v.add(["add", "a.tar.gz"]).status == 0)
        #expect(try v.listed().map(\.name) == ["a.tar.gz"])
        #expect(try v.get("a.tar.gz").stdout == [2, 2])
        #expect(try v.run(["get", "a.tar.gz", "--version", "1"]).stdout == [1])
    }

    @Test func addFromStandardInput() throws {
        let content = randomBytes(1_500_000)
        let r = try v.add(["add", "-", "--name", "from-stdin.bin"], stdin: content)
        #expect(r.status == 0)
        #expect(r.stderr == "vault: added 'from-stdin.bin' (1.4 MiB)\n")
        #expect(try v.listed().map(\.size) == [1_500_000])
        #expect(try v.get("from-stdin.bin").stdout == content)

        let noName = try v.add(["add", "-"], stdin: content)
        #expect(noName.status == 2)
        #expect(firstLine(noName.stderr) == "vault: reading standard input ('-') needs --name")
    }

    @Test func addFromEmptyStandardInput() throws {
        #expect(try v.add(["add", "-", "--name", "empty"]).status == 0)
        #expect(try v.listed().map(\.size) == [0])
    }

    /// An input that cannot be read is skipped with a warning, the others are
    /// added, and the exit status is 3. The test runs as root here, where a
    /// chmod 000 file is still readable: a socket (which cannot be opened for
    /// reading) and a missing path are unreadable for everyone.
    @Test func unreadableInputsAreSkippedAndTheOthersAdded() throws {
        try v.write("good1", Array("one".utf8))
        try v.write("good2", Array("two".utf8))
        let socketPath = v.path + "/socket"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buf in
            for (i, b) in socketPath.utf8.enumerated() { buf[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        var args = ["add", "good1", "socket", "missing", "good2"]
        if geteuid() != 0 {
            try v.write("secret", Array("x".utf8), mode: 0o000)
            args.append("secret")
        }
        let r = try v.add(args)
        #expect(r.status == 3)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        // Skips are said as they happen; each "added" once its drop-in is
        // durable, when its group lands (DropInBatch), so after them.
        let warnings = lines.filter { $0.hasPrefix("vault: warning: ") }
        #expect(warnings.prefix(2) == ["vault: warning: skipped 'socket': not a regular file or folder",
                                       "vault: warning: skipped 'missing': cannot open 'missing': no such file or directory"])
        #expect(lines.filter { !$0.hasPrefix("vault: warning: ") } == ["vault: added 'good1' (3 B)", "vault: added 'good2' (3 B)"])
        if geteuid() != 0 {
            #expect(warnings.last == "vault: warning: skipped 'secret': cannot open 'secret': permission denied")
        }
        #expect(try v.listed().map(\.name) == ["good1", "good2"])
        #expect(try v.get("good2").stdout == Array("two".utf8))
    }

    /// A folder is one item; a special file inside it is left out with a
    /// warning and exit 3, the rest is stored.
    @Test func aFolderIsOneItemAndSpecialFilesInsideAreSkippedWithExit3() throws {
        try FileManager.default.createDirectory(atPath: v.path + "/folder/sub", withIntermediateDirectories: true)
        try v.write("folder/sub/a.txt", Array("aaa".utf8))
        #expect(mkfifo(v.path + "/folder/pipe", 0o600) == 0)
        try v.write("file", [7])
        let r = try v.add(["add", "folder", "file"])
        #expect(r.status == 3)
        #expect(r.stderr.split(separator: "\n").map(String.init).prefix(2) == [
            "vault: warning: skipped 'folder/pipe': not a regular file, folder or symlink",
            "vault: added 'folder' (1 file, 3 B)"])
        #expect(try v.listed().map(\.name) == ["file", "folder"])
    }

    /// A FIFO is not a regular file and is refused as one; opening it must
    /// not block the other inputs (as `open(2)` without O_NONBLOCK does when
    /// nobody writes to the FIFO).
    @Test func aFIFOIsSkippedWithoutHanging() throws {
        #expect(mkfifo(v.path + "/fifo", 0o600) == 0)
        try v.write("file", [7])
        let r = try CLIHarness.run(["--vault", v.dir, "add", "fifo", "file"], environment: v.environment(),
                                   cwd: v.path, timeout: 5)
        #expect(!r.timedOut, "vault add blocked on opening the FIFO")
        #expect(r.status == 3)
        #expect(firstLine(r.stderr) == "vault: warning: skipped 'fifo': not a regular file or folder")
    }

    /// From cron: no terminal (every harness child is in a new session), stdin
    /// not a tty, and no password source anywhere in the environment.
    @Test func addNeedsNoTerminalAndNoPasswordSource() throws {
        try v.write("cron.log", Array("nightly".utf8))
        let env = CLIHarness.environment(home: v.path)  // PATH, HOME, LANG only
        #expect(env.keys.allSatisfy { !$0.hasPrefix("VAULT_") })
        let r = try CLIHarness.run(["--vault", v.dir, "add", "cron.log"], environment: env, cwd: v.path)
        #expect(r.status == 0)
        #expect(r.stderr == "vault: added 'cron.log' (7 B)\n")
        let piped = try CLIHarness.run(["--vault", v.dir, "add", "-", "--name", "piped"], stdin: Array("data".utf8),
                                       environment: env, cwd: v.path)
        #expect(piped.status == 0)
        #expect(try v.listed().map(\.name) == ["cron.log", "piped"])
        #expect(try v.get("piped").stdout == Array("data".utf8))
    }

    // MARK: list, info

    @Test func listTextAndJSON() throws {
        try v.write("small.txt", Array("0123456789".utf8))
        try v.write("with space.bin", randomBytes(1536))
        #expect(try v.add(["add", "small.txt", "with space.bin"]).status == 0)
        let text = try v.run(["list"])
        #expect(text.status == 0)
        #expect(text.stderr == "")
        let lines = text.stdoutText.split(separator: "\n").map(String.init)
        // A header, one line per item, the totals.
        #expect(lines.count == 4)
        #expect(lines.first == "     SIZE     STORED  ADDED             KIND                ORIGIN      VERSIONS  NAME")
        #expect(lines[1].hasPrefix("     10 B  ") == true)
        #expect(lines[1].hasSuffix("  file                dropped-in         1  small.txt") == true)
        #expect(lines[2].hasPrefix("  1.5 KiB  ") == true)
        #expect(lines[2].hasSuffix("  with space.bin") == true)
        // The totals: what the items hold, then what their blobs take on disk.
        #expect(lines.last?.hasPrefix("2 items, 2 files, 1.5 KiB, ") == true && lines.last?.hasSuffix(" on disk") == true)
        // STORED: the sealed blob (header, padding, tag) of those 10 bytes.
        #expect(lines[1].split(separator: " ", omittingEmptySubsequences: true).prefix(4) == ["10", "B", "80", "B"], "\(lines[1])")

        let json = try v.run(["list", "--json"])
        #expect(json.status == 0)
        let items = try JSONObject.parse(json.stdout)["items"] as? [[String: Any]] ?? []
        #expect(items.compactMap { $0["name"] as? String } == ["small.txt", "with space.bin"])
        #expect(items.compactMap { $0["size"] as? Int } == [10, 1536])
        #expect(items.compactMap { $0["origin"] as? String } == ["dropped-in", "dropped-in"])
        #expect(items.compactMap { $0["kind"] as? String } == ["file", "file"])
        #expect(items.compactMap { $0["mode"] as? Int } == [0o644, 0o644])
        for item in items {
            let added = (item["added"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
            #expect(added.map { abs($0.timeIntervalSinceNow) < 600 } == true, "\(item)")
        }
    }

    @Test func infoNeedsNoPasswordAndCountsWaitingDropIns() throws {
        try v.write("a", [1])
        try v.write("b", [2])
        var info = try v.info()
        #expect(info["format_version"] as? Int == 4)
        #expect(info["kem"] as? String == "x-wing")
        #expect((info["slots"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["password"])
        #expect(info["waiting_drop_ins"] as? Int == 0)
        #expect(info["path"] as? String == v.dir)
        let kdf = info["kdf"] as? [String: Any]
        #expect(kdf?["algorithm"] as? String == "argon2id")
        #expect(kdf?["memory_kib"] as? Int == 1024)
        #expect(kdf?["passes"] as? Int == 1)
        #expect(kdf?["lanes"] as? Int == 1)
        #expect((info["vault_id"] as? String)?.count == 32)
        #expect(try v.add(["add", "a", "b"]).status == 0)
        info = try v.info()
        #expect(info["waiting_drop_ins"] as? Int == 2)
        #expect(try v.listed().count == 2)
        info = try v.info()
        #expect(info["waiting_drop_ins"] as? Int == 0)

        let text = try v.add(["info"])
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("items waiting to be absorbed: 0\n"))
        #expect(text.stdoutText.contains("argon2id: 1 MiB, 1 pass, 1 lane\n"))
        #expect(text.stdoutText.contains("leftovers of interrupted commands: 0\n"))
    }

    // MARK: get, restore

    @Test func getStreamsThreeMiBOfBinaryToStandardOutput() throws {
        var content = randomBytes(3 * 1024 * 1024)
        for i in 0..<256 { content[i] = UInt8(i) }  // every byte value, including NUL and newlines
        try v.write("big.bin", content)
        #expect(try v.add(["add", "big.bin"]).status == 0)
        let r = try v.get("big.bin")
        #expect(r.status == 0)
        #expect(r.stderr == "")
        #expect(r.stdout.count == content.count)
        #expect(r.stdout == content)
    }

    @Test func getToAFileNeverOverwrites() throws {
        let content = randomBytes(200_000)
        try v.write("in.bin", content)
        #expect(try v.add(["add", "in.bin"]).status == 0)
        let r = try v.run(["get", "in.bin", "-o", "out.bin"])
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: v.path + "/out.bin"))) == content)

        let existing = try v.write("keep.txt", Array("do not touch".utf8))
        let before = try FileManager.default.attributesOfItem(atPath: existing)
        let again = try v.run(["get", "in.bin", "-o", "keep.txt"])
        #expect(again.status == 15)
        #expect(firstLine(again.stderr) == "vault: 'keep.txt' already exists")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "do not touch")
        let after = try FileManager.default.attributesOfItem(atPath: existing)
        #expect(after[.modificationDate] as? Date == before[.modificationDate] as? Date)
        #expect(after[.systemFileNumber] as? NSNumber == before[.systemFileNumber] as? NSNumber)
        // No temp file left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.path).filter { $0.hasPrefix(".tmp-") } == [])
    }

    @Test func getIntoAMissingDirectoryExits1() throws {
        try v.write("x", [1])
        #expect(try v.add(["add", "x"]).status == 0)
        let r = try v.run(["get", "x", "-o", "no/such/dir/x"])
        #expect(r.status == 1)
        #expect(firstLine(r.stderr) == "vault: cannot write 'no/such/dir/x': there is no directory 'no/such/dir'")
        // Checked before the password is asked: no password source, same answer.
        let early = try v.add(["get", "x", "-o", "no/such/dir/x"])
        #expect(early.status == 1)
        #expect(firstLine(early.stderr) == firstLine(r.stderr))
        try v.write("exists", [2])
        let exists = try v.add(["get", "x", "-o", "exists"])
        #expect(exists.status == 15)
        #expect(firstLine(exists.stderr) == "vault: 'exists' already exists")
        // restore --to: a missing parent is refused first; a missing DIR is made.
        let missing = try v.add(["restore", "x", "--to", "no/such/dir"])
        #expect(missing.status == 1)
        #expect(firstLine(missing.stderr) == "vault: cannot write 'no/such/dir': there is no directory 'no/such'")
        let made = try v.run(["restore", "x", "--to", "new-dir"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: v.path + "/new-dir/x"))
    }

    @Test func restoreWritesItemsUnderADirectoryAndNeverOverwrites() throws {
        try v.write("one.txt", Array("1".utf8))
        try v.write("two.txt", Array("22".utf8))
        #expect(try v.add(["add", "one.txt", "two.txt"]).status == 0)
        try FileManager.default.createDirectory(atPath: v.path + "/out", withIntermediateDirectories: false)
        let r = try v.run(["restore", "one.txt", "two.txt", "--to", "out"])
        #expect(r.status == 0)
        #expect(r.stderr == "vault: restored 'one.txt' to 'out/one.txt'\nvault: restored 'two.txt' to 'out/two.txt'\n")
        #expect(try String(contentsOfFile: v.path + "/out/two.txt", encoding: .utf8) == "22")

        try FileManager.default.removeItem(atPath: v.path + "/out/two.txt")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: v.path + "/out/one.txt"))
        // One skipped, one restored: partial (3), and the skipped one named.
        let again = try v.run(["restore", "one.txt", "two.txt", "--to", "out"])
        #expect(again.status == 3)
        #expect(firstLine(again.stderr) == "vault: 'out/one.txt' already exists")
        #expect(again.stderr.contains("vault: warning: restored 1 item; skipped 1 item: 'one.txt'\n"), "\(again.stderr)")
        // Only skipped: partial too, one summary, the hint once.
        let none = try v.run(["restore", "one.txt", "two.txt", "--to", "out"])
        #expect(none.status == 3)
        #expect(none.stderr.components(separatedBy: "hint: vault never overwrites").count == 2, "\(none.stderr)")
        #expect(none.stderr.contains("vault: warning: restored 0 items; skipped 2 items: 'one.txt', 'two.txt'\n"), "\(none.stderr)")
        #expect(try String(contentsOfFile: v.path + "/out/one.txt", encoding: .utf8) == "mine")
        #expect(try String(contentsOfFile: v.path + "/out/two.txt", encoding: .utf8) == "22")  // the other one still done

        // Default: the current directory (the sandbox here).
        let here = try v.run(["restore", "two.txt"])
        #expect(here.status == 3)
        #expect(firstLine(here.stderr) == "vault: './two.txt' already exists")
    }

    /// More items than one sync group (128): each restored whole under its
    /// own name, in the order asked, a name that exists skipped wherever it
    /// falls, and nothing else left in the directory.
    @Test func aRestoreOfManyItemsIsWholeAcrossSyncGroups() throws {
        var want: [String: [UInt8]] = [:]
        for i in 0..<300 {
            let name = String(format: "n%03d", i)
            want[name] = randomBytes(i * 53 % 3000)
            try v.write(name, want[name]!)
        }
        #expect(try v.add(["add"] + want.keys.sorted()).status == 0)
        try FileManager.default.createDirectory(atPath: v.path + "/out", withIntermediateDirectories: false)
        for taken in ["n005", "n260"] { try Data("mine".utf8).write(to: URL(fileURLWithPath: v.path + "/out/" + taken)) }
        let r = try v.run(["restore", "*", "--to", "out"])
        #expect(r.status == 3, "\(r.stderr)")
        let notes = r.stderr.split(separator: "\n").filter { $0.hasPrefix("vault: restored '") }
        #expect(notes.count == 298)
        #expect(notes.first == "vault: restored 'n000' to 'out/n000'" && notes.last == "vault: restored 'n299' to 'out/n299'")
        #expect(r.stderr.contains("skipped 2 items: 'n005', 'n260'"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.path + "/out").sorted() == want.keys.sorted())
        for (name, bytes) in want {
            let got = Array(try Data(contentsOf: URL(fileURLWithPath: v.path + "/out/" + name)))
            #expect(got == (["n005", "n260"].contains(name) ? Array("mine".utf8) : bytes), "\(name)")
        }
    }

    // MARK: remove, rename

    @Test func removeDropsTheItemAndItsBlob() throws {
        try v.write("a", [1])
        try v.write("b", [2])
        try v.write("c", [3])
        #expect(try v.add(["add", "a", "b", "c"]).status == 0)
        #expect(try v.listed().count == 3)
        #expect(try v.filesInVault().filter { $0.hasPrefix("items/") }.count == 3)
        let r = try v.run(["remove", "a", "c"])
        #expect(r.status == 0)
        #expect(r.stderr == "vault: removed 'a'\nvault: removed 'c'\n")
        #expect(try v.listed().map(\.name) == ["b"])
        #expect(try v.filesInVault().filter { $0.hasPrefix("items/") }.count == 1)

        // One missing name: exit 16 and nothing removed.
        let missing = try v.run(["remove", "b", "nope"])
        #expect(missing.status == 16)
        #expect(firstLine(missing.stderr) == "vault: no item named 'nope'")
        #expect(try v.listed().map(\.name) == ["b"])
    }

    @Test func renameAndRenameOntoAnExistingName() throws {
        try v.write("a", Array("A".utf8))
        try v.write("b", Array("B".utf8))
        #expect(try v.add(["add", "a", "b"]).status == 0)
        let r = try v.run(["rename", "a", "alpha"])
        #expect(r.status == 0)
        #expect(r.stderr == "vault: renamed 'a' to 'alpha'\n")
        #expect(try v.listed().map(\.name) == ["alpha", "b"])
        #expect(try v.get("alpha").stdout == Array("A".utf8))

        let taken = try v.run(["rename", "alpha", "b"])
        #expect(taken.status == 15)
        #expect(firstLine(taken.stderr) == "vault: 'b' already exists")
        #expect(try v.get("b").stdout == Array("B".utf8))
        #expect(try v.get("alpha").stdout == Array("A".utf8))

        let missing = try v.run(["rename", "a", "c"])
        #expect(missing.status == 16)
        #expect(firstLine(missing.stderr) == "vault: no item named 'a'")
    }

    // MARK: passwd

    @Test func passwdFromAFile() throws {
        try v.write("keep", Array("kept".utf8))
        #expect(try v.add(["add", "keep"]).status == 0)
        let newFile = try v.sandbox.file("new-password", "a new password ünïcödé\n")
        let headerBefore = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))
        let r = try v.run(["passwd", "--new-password-file", newFile])
        #expect(r.status == 0)
        #expect(r.stderr.hasSuffix("vault: password changed\n"))
        let headerAfter = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))
        // Version 4, one slot "password" at 1246: its m, t, p at 1265..<1277, salt at 1277..<1293.
        #expect(headerAfter.count == 1425)
        #expect(headerAfter[9..<25] == headerBefore[9..<25])        // vault id
        #expect(headerAfter[1246..<1277] == headerBefore[1246..<1277])  // slot kind, name, created, KDF parameters
        #expect(headerAfter[1277..<1293] != headerBefore[1277..<1293])  // a new salt
        #expect(Array(headerBefore[1353..<1361]) == [0, 0, 0, 0, 0, 0, 0, 1])  // the header counter: 1 at init,
        #expect(Array(headerAfter[1353..<1361]) == [0, 0, 0, 0, 0, 0, 0, 2])   // one more for each header written

        let old = try v.run(["list"])
        #expect(old.status == 12)
        #expect(firstLine(old.stderr) == "vault: wrong password")
        let new = try v.run(["get", "keep"], password: newFile)
        #expect(new.status == 0)
        #expect(new.stdout == Array("kept".utf8))
        #expect(try v.run(["check", "--read-data"], password: newFile).status == 0)
    }

    @Test func passwdWithTheWrongCurrentPasswordExits12() throws {
        let wrong = try v.sandbox.file("wrong", "not it\n")
        let newFile = try v.sandbox.file("new", "new\n")
        let r = try v.run(["passwd", "--new-password-file", newFile], password: wrong)
        #expect(r.status == 12)
        #expect(firstLine(r.stderr) == "vault: wrong password")
        #expect(try v.run(["list"]).status == 0)
    }

    // MARK: check

    @Test func checkPlainReadDataAndJSON() throws {
        try v.write("a", randomBytes(1_200_000))
        try v.write("b", Array("bee".utf8))
        #expect(try v.add(["add", "a", "b"]).status == 0)
        let plain = try v.run(["check"])
        #expect(plain.status == 0)
        #expect(plain.stderr == "vault: no problems found (2 items of 1.1 MiB, 1.2 MiB on disk)\n")
        let full = try v.run(["check", "--read-data"])
        #expect(full.status == 0)
        #expect(full.stderr == "vault: no problems found (2 items of 1.1 MiB, 1.2 MiB on disk, 1.1 MiB read)\n")
        let json = try v.run(["check", "--read-data", "--json"])
        #expect(json.status == 0)
        let report = try JSONObject.parse(json.stdout)
        #expect(report["ok"] as? Bool == true)
        #expect(report["items_checked"] as? Int == 2)
        #expect(report["bytes_checked"] as? Int == 1_200_003)
        #expect(report["read_data"] as? Bool == true)
        #expect((report["problems"] as? [Any])?.isEmpty == true)
        #expect((report["leftovers"] as? [Any])?.isEmpty == true)
    }

    /// An orphan (a blob no manifest names) is reported by `check` as a
    /// warning, exit 0, kept by every unlock, moved into quarantine/ by
    /// `check --repair` and deleted by `check --repair --purge` (FORMAT.md,
    /// "Orphans").
    @Test func checkReportsLeftoversAndRepairRemovesThem() throws {
        try v.write("a", [1])
        #expect(try v.add(["add", "a"]).status == 0)
        #expect(try v.listed().count == 1)
        let orphan = "items/" + String(repeating: "ab", count: 16)
        try Data(randomBytes(100)).write(to: URL(fileURLWithPath: v.dir + "/" + orphan))
        let r = try v.run(["check"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("vault: warning: orphan (no item names it): \(orphan)\n"), "check said: \(r.stderr)")
        let json = try v.run(["check", "--json"])
        #expect((try JSONObject.parse(json.stdout)["orphans"] as? [String]) == [orphan])
        #expect(try v.run(["list"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: v.dir + "/" + orphan))   // no unlock deletes it
        let repair = try v.run(["check", "--repair"])
        #expect(repair.status == 0)
        #expect(!FileManager.default.fileExists(atPath: v.dir + "/" + orphan))
        #expect(FileManager.default.fileExists(atPath: v.dir + "/quarantine/" + String(repeating: "ab", count: 16)))
        let purge = try v.run(["check", "--repair", "--purge"])
        #expect(purge.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.dir + "/quarantine").isEmpty)
    }

    /// Every file the vault writes is 0600, every directory 0700.
    @Test func filesAre0600AndDirectories0700() throws {
        try v.write("a", randomBytes(10))
        #expect(try v.add(["add", "a"]).status == 0)
        let inbox = try v.filesInVault().filter { $0.hasPrefix("inbox/") }
        #expect(inbox.count == 2)  // <id>.item and <id>.env
        #expect(try v.listed().count == 1)
        #expect(try v.run(["passwd", "--new-password-file", try v.sandbox.file("n", "a new password\n")]).status == 0)
        let fm = FileManager.default
        for rel in try v.filesInVault() + inbox where fm.fileExists(atPath: v.dir + "/" + rel) {
            #expect((try fm.attributesOfItem(atPath: v.dir + "/" + rel)[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(rel)")
        }
        for rel in ["", "/items", "/inbox"] {
            #expect((try fm.attributesOfItem(atPath: v.dir + rel)[.posixPermissions] as? NSNumber)?.intValue == 0o700, "\(rel)")
        }
    }

    @Test func aVaultWithSymbolicLinksIsRefused() throws {
        try v.write("a", [1])
        #expect(try v.add(["add", "a"]).status == 0)
        #expect(try v.listed().count == 1)
        let fm = FileManager.default
        // The vault directory itself through a link.
        try fm.createSymbolicLink(atPath: v.path + "/link", withDestinationPath: v.dir)
        let viaLink = try CLIHarness.run(["--vault", v.path + "/link", "--password-file", v.passwordFile, "list"],
                                         environment: v.environment(), cwd: v.path)
        #expect(viaLink.status == 1)
        #expect(firstLine(viaLink.stderr) == "vault: refusing '\(v.path)/link': a symbolic link or not the expected kind of file")
        // The manifest as a link to a copy of itself.
        try fm.moveItem(atPath: v.dir + "/manifest", toPath: v.path + "/manifest-elsewhere")
        try fm.createSymbolicLink(atPath: v.dir + "/manifest", withDestinationPath: v.path + "/manifest-elsewhere")
        let r = try v.run(["list"])
        #expect(r.status == 1)
        #expect(firstLine(r.stderr) == "vault: refusing '\(v.dir)/manifest': a symbolic link or not the expected kind of file")
    }

    // MARK: vault location

    @Test func vaultLocationPrecedence() throws {
        let base = v.path
        let optionDir = base + "/by-option", envDir = base + "/by-env"
        let xdg = base + "/xdg", home = base + "/home"
        for d in [xdg, home + "/.local/share"] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        }
        let initArgs = ["--password-file", v.passwordFile] + VaultFixture.cheapInit
        func run(_ args: [String], _ env: [String: String]) throws -> CLIHarness.Result {
            try CLIHarness.run(args, environment: CLIHarness.environment(home: home, VaultFixture.weak.merging(env) { $1 }),
                               cwd: base)
        }
        // Each way creates a vault where it says.
        #expect(try run(["--vault", optionDir] + initArgs, ["VAULT_DIR": envDir, "XDG_DATA_HOME": xdg]).status == 0)
        #expect(try run(initArgs, ["VAULT_DIR": envDir, "XDG_DATA_HOME": xdg]).status == 0)
        #expect(try run(initArgs, ["XDG_DATA_HOME": xdg]).status == 0)
        #expect(try run(initArgs, [:]).status == 0)
        for d in [optionDir, envDir, xdg + "/vault", home + "/.local/share/vault"] {
            #expect(FileManager.default.fileExists(atPath: d + "/vault.header"), "\(d)")
        }
        func where_(_ args: [String], _ env: [String: String]) throws -> String? {
            let r = try run(args + ["info", "--json"], env)
            return try JSONObject.parse(r.stdout)["path"] as? String
        }
        let all = ["VAULT_DIR": envDir, "XDG_DATA_HOME": xdg]
        #expect(try where_(["--vault", optionDir], all) == optionDir)
        #expect(try where_([], all) == envDir)
        #expect(try where_([], ["XDG_DATA_HOME": xdg]) == xdg + "/vault")
        #expect(try where_([], [:]) == home + "/.local/share/vault")
        // Empty variables count as unset; a relative XDG_DATA_HOME is ignored.
        #expect(try where_([], ["VAULT_DIR": "", "XDG_DATA_HOME": xdg]) == xdg + "/vault")
        #expect(try where_([], ["XDG_DATA_HOME": "relative"]) == home + "/.local/share/vault")
        // And `add` follows the same rule: the item lands in the VAULT_DIR vault.
        try v.write("located", [9])
        #expect(try run(["add", "located"], all).status == 0)
        let listed = try run(["--password-file", v.passwordFile, "list", "--json"], all)
        #expect(try ListedItem.parse(listed.stdout).map(\.name) == ["located"])
        let other = try run(["--password-file", v.passwordFile, "list", "--json"], ["XDG_DATA_HOME": xdg])
        #expect(try ListedItem.parse(other.stdout).map(\.name) == [])
    }

    /// A new user's first `vault init` with no location given: the default
    /// ~/.local/share/vault must work on a home without ~/.local/share yet.
    @Test func initAtTheDefaultLocationCreatesMissingParents() throws {
        let home = v.path + "/fresh-home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        let env = CLIHarness.environment(home: home, VaultFixture.weak)
        let r = try CLIHarness.run(["--password-file", v.passwordFile] + VaultFixture.cheapInit, environment: env, cwd: home)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/vault/vault.header"))
    }

    // MARK: nothing on disk names an item

    @Test func nothingOnDiskNamesOrRevealsAnItem() throws {
        let name = "zebra-quokka-7731.secret"
        let marker = Array("CONTENT-MARKER-f00dfeed-".utf8)
        var content: [UInt8] = []
        for _ in 0..<2000 { content += marker }
        try v.write(name, content)
        #expect(try v.add(["add", name]).status == 0)
        // While waiting in the inbox, and again after list absorbed it.
        for phase in ["waiting", "absorbed"] {
            if phase == "absorbed" { #expect(try v.listed().map(\.name) == [name]) }
            let files = try v.filesInVault()
            #expect(!files.isEmpty)
            for rel in files {
                #expect(!rel.contains("zebra") && !rel.contains("quokka"), "\(phase): file name \(rel)")
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: v.dir + "/" + rel)))
                for needle in [Array(name.utf8), Array("zebra-quokka".utf8), Array(marker.prefix(14))] {
                    #expect(!contains(bytes, needle), "\(phase): \(rel) contains \(String(decoding: needle, as: UTF8.self))")
                }
                // Nor its exact size: the item's file is padded (Padmé).
                #expect(bytes.count != content.count, "\(phase): \(rel)")
            }
        }
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first && Array(haystack[i..<i + needle.count]) == needle { return true }
            i += 1
        }
        return false
    }

    // MARK: bad input

    private func blobOf(_ name: String) throws -> String {
        // Only one item in these tests: its blob is the only file in items/.
        let blobs = try v.filesInVault().filter { $0.hasPrefix("items/") }
        guard blobs.count == 1 else { throw Failure("expected one blob, found \(blobs)") }
        return v.dir + "/" + blobs[0]
    }

    private func flip(_ path: String, at offset: Int) throws {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[offset] ^= 0x04
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test(arguments: [40, 36 + 1_048_576 + 16 + 100, -20])
    func aBitFlippedBlobExits14NamingTheItem(offset: Int) throws {
        try v.write("photo.jpg", randomBytes(2_500_000))
        #expect(try v.add(["add", "photo.jpg"]).status == 0)
        #expect(try v.listed().count == 1)
        let blob = try blobOf("photo.jpg")
        let size = try FileManager.default.attributesOfItem(atPath: blob)[.size] as! NSNumber
        try flip(blob, at: offset >= 0 ? offset : size.intValue + offset)

        let toFile = try v.run(["get", "photo.jpg", "-o", "out.jpg"])
        #expect(toFile.status == 14)
        #expect(firstLine(toFile.stderr) == "vault: item 'photo.jpg': data is corrupted or has been tampered with")
        #expect(!FileManager.default.fileExists(atPath: v.path + "/out.jpg"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.path).filter { $0.hasPrefix(".tmp-") } == [])

        let toStdout = try v.get("photo.jpg")
        #expect(toStdout.status == 14)
        #expect(firstLine(toStdout.stderr) == "vault: item 'photo.jpg': data is corrupted or has been tampered with")

        let check = try v.run(["check", "--read-data"])
        #expect(check.status == 14)
        #expect(firstLine(check.stderr) == "vault: item 'photo.jpg': corrupted or tampered")
        // The vault as a whole still opens.
        #expect(try v.run(["list"]).status == 0)
    }

    @Test func aMissingBlobExits14NamingTheItem() throws {
        try v.write("gone", [1, 2, 3])
        #expect(try v.add(["add", "gone"]).status == 0)
        #expect(try v.listed().count == 1)
        try FileManager.default.removeItem(atPath: try blobOf("gone"))
        let r = try v.get("gone")
        #expect(r.status == 14)
        #expect(firstLine(r.stderr) == "vault: item 'gone': data is corrupted or has been tampered with")
        let check = try v.run(["check"])
        #expect(check.status == 14)
        #expect(firstLine(check.stderr) == "vault: item 'gone': blob missing")
    }

    @Test func aTruncatedOrBitFlippedManifestExits14() throws {
        try v.write("a", [1])
        #expect(try v.add(["add", "a"]).status == 0)
        #expect(try v.listed().count == 1)
        let manifest = v.dir + "/manifest"
        let original = try Data(contentsOf: URL(fileURLWithPath: manifest))
        for damaged in [original.prefix(original.count - 1), original.prefix(30), Data(),
                        { var d = original; d[d.count - 40] ^= 1; return d }()] {
            try damaged.write(to: URL(fileURLWithPath: manifest))
            for args in [["list"], ["get", "a"], ["check"]] {
                let r = try v.run(args)
                #expect(r.status == 14, "\(args) on \(damaged.count) bytes")
                #expect(firstLine(r.stderr) == "vault: vault data is corrupted or has been tampered with")
            }
        }
        try FileManager.default.removeItem(atPath: manifest)
        let missing = try v.run(["list"])
        #expect(missing.status == 14)
    }

    // The first slot's m, t, p (version-3 header: at 1265, 1269, 1273), edited
    // on purpose: the checksum is recomputed, so the bounds checks decide.
    @Test(arguments: [(1265, [0xff, 0xff, 0xff, 0xff]), (1269, [0xff, 0xff, 0xff, 0xff]), (1273, [0, 0, 0, 0]),
                      (1265, [0x00, 0x20, 0x00, 0x01])])
    func absurdArgon2ParametersAreRefusedBeforeAllocating(offset: Int, bytes: [UInt8]) throws {
        let header = v.dir + "/vault.header"
        var data = Array(try Data(contentsOf: URL(fileURLWithPath: header)))
        data.replaceSubrange(offset..<offset + 4, with: bytes)
        try Data(HeaderDamageTests.resummed(data)).write(to: URL(fileURLWithPath: header))
        var r: CLIHarness.Result!
        let seconds = try measure { r = try v.run(["list"], timeout: 10) }
        #expect(r.status == 14)
        #expect(firstLine(r.stderr) == "vault: vault data is corrupted or has been tampered with")
        #expect(seconds < 0.5, "took \(seconds) s: Argon2 must not run")
        let info = try v.add(["info"])
        #expect(info.status == 14)
    }

    @Test func aTamperedHeaderIsRefused() throws {
        let header = v.dir + "/vault.header"
        try flip(header, at: 160)  // inside the X-Wing public key
        var edited = Array(try Data(contentsOf: URL(fileURLWithPath: header)))
        try Data(HeaderDamageTests.resummed(edited)).write(to: URL(fileURLWithPath: header))
        var r = try v.run(["list"])
        #expect(r.status == 14)
        #expect(firstLine(r.stderr) == "vault: vault data is corrupted or has been tampered with")
        // Inside the header MAC (its last 32 bytes before the checksum).
        edited = Array(try Data(contentsOf: URL(fileURLWithPath: header)))
        edited[160] ^= 0x04
        edited[edited.count - 40] ^= 0x04
        try Data(HeaderDamageTests.resummed(edited)).write(to: URL(fileURLWithPath: header))
        r = try v.run(["list"])
        #expect(r.status == 14)
        #expect(firstLine(r.stderr) == "vault: vault data is corrupted or has been tampered with")
    }

    @Test func notAVaultExits10() throws {
        let empty = v.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let junk = v.path + "/junk"
        try FileManager.default.createDirectory(atPath: junk, withIntermediateDirectories: false)
        try Data("hello".utf8).write(to: URL(fileURLWithPath: junk + "/vault.header.txt"))
        let file = try v.write("plain-file", [1])
        for dir in [empty, junk, file, v.path + "/does-not-exist"] {
            for args in [["list"], ["add", file], ["info"], ["get", "x"], ["check"]] {
                let r = try CLIHarness.run(["--vault", dir, "--password-file", v.passwordFile] + args,
                                           environment: v.environment(), cwd: v.path)
                #expect(r.status == 10, "\(args) in \(dir)")
                #expect(firstLine(r.stderr) == "vault: no vault at '\(dir)'", "\(args) in \(dir)")
            }
        }
    }

    @Test func aFileWithTheWrongMagicIsNotAVault() throws {
        try Data(repeating: 0x41, count: 182).write(to: URL(fileURLWithPath: v.dir + "/vault.header"))
        let r = try v.run(["list"])
        #expect(r.status == 10)
        #expect(firstLine(r.stderr) == "vault: no vault at '\(v.dir)'")
    }

    @Test func wrongPasswordExits12() throws {
        let wrong = try v.sandbox.file("wrong", "wrong password\n")
        // The first two wrong passwords in a row cost nothing but Argon2id.
        for args in [["list"], ["get", "x"]] {
            let r = try v.run(args, password: wrong)
            #expect(r.status == 12, "\(args)")
            #expect(r.stderr == "vault: wrong password\n", "\(args)")
            #expect(r.stdout.isEmpty)
        }
        // A correct password clears the count.
        #expect(try v.run(["check"]).status == 0)
        for args in [["check"], ["remove", "x"]] {
            let r = try v.run(args, password: wrong)
            #expect(r.status == 12, "\(args)")
            #expect(r.stderr == "vault: wrong password\n", "\(args)")
        }
    }

    /// From the third wrong password in a row a wait is imposed (docs/FORMAT.md,
    /// "Attempt delay"); during it every unlock is refused with 13 at once,
    /// even with the right password, and without running Argon2id.
    @Test func repeatedWrongPasswordsLockOutWithExit13() throws {
        let wrong = try v.sandbox.file("wrong", "wrong password\n")
        for _ in 0..<2 { #expect(try v.run(["list"], password: wrong).status == 12) }
        let third = try v.run(["list"], password: wrong)
        #expect(third.status == 12)
        #expect(firstLine(third.stderr).hasPrefix("vault: wrong password; the next attempt is possible in 5 s (at "))
        for file in [wrong, v.passwordFile] {
            var r: CLIHarness.Result!
            let seconds = try measure { r = try v.run(["list"], password: file) }
            #expect(r.status == 13)
            #expect(firstLine(r.stderr).hasPrefix("vault: too many wrong passwords; try again in "), "\(r.stderr)")
            #expect(seconds < 1)
        }
        // add and info need no password and are not held up.
        try v.write("a", [1])
        #expect(try v.add(["add", "a"]).status == 0)
        #expect(try v.info()["waiting_drop_ins"] as? Int == 1)
    }

    @Test func noSuchItemExits16() throws {
        try v.write("real", [1])
        #expect(try v.add(["add", "real"]).status == 0)
        try FileManager.default.createDirectory(atPath: v.path + "/restored", withIntermediateDirectories: false)
        for args in [["get", "ghost"], ["get", "ghost", "-o", "out"], ["restore", "real", "ghost", "--to", "restored"],
                     ["remove", "ghost"], ["rename", "ghost", "x"], ["get", "REAL"]] {
            let r = try v.run(args)
            let missing = args.contains("REAL") ? "REAL" : "ghost"
            #expect(r.status == 16, "\(args)")
            #expect(firstLine(r.stderr) == "vault: no item named '\(missing)'", "\(args)")
        }
        #expect(!FileManager.default.fileExists(atPath: v.path + "/out"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.path + "/restored") == [])  // every name checked first
        #expect(try v.listed().map(\.name) == ["real"])
    }

    @Test func usageErrorExits2() throws {
        let r = try v.run(["get"])
        #expect(r.status == 2)
        #expect(firstLine(r.stderr) == "vault: missing NAME")
    }

    /// A second writer while another process holds the writer lock gets 11
    /// and changes nothing; readers and drop-ins go on.
    @Test func aSecondWriterIsRefusedWithExit11() throws {
        try v.write("a", [1])
        #expect(try v.add(["add", "a"]).status == 0)
        #expect(try v.listed().count == 1)
        let ready = v.path + "/locked", done = v.path + "/release"
        let holder = Collector<CLIHarness.Result>()
        let lock = v.dir + "/lock", env = v.environment()
        let script = "touch '\(ready)'; i=0; while [ ! -e '\(done)' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done"
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            if let r = try? CLIHarness.run(["-x", lock, "/bin/sh", "-c", script], environment: env, timeout: 30,
                                           executable: "/usr/bin/flock") { holder.append(r) }
            group.leave()
        }
        defer {
            _ = FileManager.default.createFile(atPath: done, contents: nil)
            group.wait()
        }
        var waited = 0
        while !FileManager.default.fileExists(atPath: ready) && waited < 200 { usleep(25_000); waited += 1 }
        #expect(FileManager.default.fileExists(atPath: ready))

        for args in [["remove", "a"], ["rename", "a", "b"], ["check", "--repair"]] {
            let r = try v.run(args)
            #expect(r.status == 11, "\(args)")
            #expect(firstLine(r.stderr) == "vault: the vault is busy: another vault process is writing to it", "\(args)")
        }
        let newFile = try v.sandbox.file("new", "new\n")
        let passwd = try v.run(["passwd", "--new-password-file", newFile])
        #expect(passwd.status == 11)
        // Drop-ins need no lock; readers still read (the drop-in waits).
        try v.write("later", [2])
        #expect(try v.add(["add", "later"]).status == 0)
        let list = try v.run(["list", "--json"])
        #expect(list.status == 0)
        #expect(try ListedItem.parse(list.stdout).map(\.name) == ["a"])
        #expect(list.stderr == "vault: warning: another vault process is writing: waiting drop-ins are not listed yet\n")
        #expect(try v.get("a").stdout == [1])

        _ = FileManager.default.createFile(atPath: done, contents: nil)
        group.wait()
        #expect(holder.all.first?.status == 0)
        #expect(try v.listed().map(\.name) == ["a", "later"])
        #expect(try v.run(["remove", "a"]).status == 0)
    }

    // MARK: the terminal

    @Test func passwordPromptsOnATerminal() throws {
        let w = try VaultFixture(create: false)
        let password = "pty password 8f3a"
        let initRun = try PTYDriver.run(["--vault", w.dir] + VaultFixture.cheapInit,
                                        steps: [.expect("new password: "), .send(password + "\n"),
                                                .expect("repeat new password: "), .send(password + "\n")],
                                        environment: w.environment())
        #expect(initRun.failed_step == nil)
        #expect(initRun.exit == 0)
        #expect(initRun.echo_at_expect == [false, false])
        #expect(initRun.echo_after)
        #expect(!initRun.transcript.contains(password))
        #expect(!initRun.transcript.contains("8f3a"))
        #expect(initRun.text.hasPrefix("new password: \nrepeat new password: \nvault: created a vault at '\(w.dir)'\n"))

        try w.write("doc.txt", Array("document".utf8))
        #expect(try w.add(["add", "doc.txt"]).status == 0)
        let list = try PTYDriver.run(["--vault", w.dir, "list"],
                                     steps: [.expect("password: "), .send(password + "\n"), .expect("doc.txt")],
                                     environment: w.environment())
        #expect(list.failed_step == nil)
        #expect(list.exit == 0)
        #expect(list.echo_at_expect == [false, true])
        #expect(!list.transcript.contains(password))
        // Asked once: exactly one prompt in the transcript.
        #expect(list.text.components(separatedBy: "password: ").count == 2)
        #expect(list.text.hasPrefix("password: \n"))

        // The second prompt takes the right password.
        let typo = try PTYDriver.run(["--vault", w.dir, "list"],
                                     steps: [.expect("password: "), .send("typo\n"), .expect("try again"),
                                             .expect("password: "), .send(password + "\n"), .expect("doc.txt")],
                                     environment: w.environment(), timeout: 30)
        #expect(typo.failed_step == nil, "\(typo.text)")
        #expect(typo.exit == 0, "\(typo.text)")

        // A typo is asked again, up to three prompts in one run.
        let wrong = try PTYDriver.run(["--vault", w.dir, "list"],
                                      steps: [.expect("password: "), .send("not the password\n"),
                                              .expect("try again"), .expect("password: "), .send("still wrong\n"),
                                              .expect("try again"), .expect("password: "), .send("wrong thrice\n")],
                                      environment: w.environment())
        #expect(wrong.exit == 12)
        #expect(wrong.text.components(separatedBy: "password: ").count == 4, "\(wrong.text)")
        #expect(wrong.text.components(separatedBy: "vault: wrong password; try again\n").count == 3, "\(wrong.text)")
        #expect(wrong.text.contains("vault: wrong password; the next attempt is possible in 5 s (at "), "\(wrong.text)")
    }
}

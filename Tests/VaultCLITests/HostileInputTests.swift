import Foundation
import Testing
import VaultCrypto
@testable import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// Bytes from whoever can write the inbox, the header's directory or a kit
/// cannot crash, hang or brick a vault (issue "Hostile bytes"): each case an
/// attacker's input, run through the built binary. A status of 128 or more
/// is a signal (a trap is 132 or 133): never acceptable.
@Suite("Hostile input")
struct HostileInputTests {
    let v: VaultFixture
    init() throws { v = try VaultFixture() }

    func expectNoCrash(_ r: CLIHarness.Result, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status < 128 && !r.timedOut, "\(what) crashed or hung: \(r.status) \(r.stderr)",
                sourceLocation: sourceLocation)
    }

    // 1. A final chunk shorter than the 8-byte trailer.
    @Test func finalChunkShorterThanTheTrailerIsRefusedNotATrap() throws {
        var d = HostileDropIn()
        d.size = 3
        let item = d.header.bytes + (try d.chunk([UInt8](repeating: 7, count: ItemCipher.chunkSize), index: 0, final: false))
            + (try d.chunk([1, 2, 3], index: 1, final: true))
        try d.drop(into: v.dir, item: item)
        for args in [["list"], ["check"], ["check", "--read-data"]] {
            let r = try v.run(args)
            expectNoCrash(r, args.joined(separator: " "))
            #expect(r.status == 0)
            #expect(r.stderr.contains("could not be opened") || r.stderr.contains("cannot be opened"), "\(r.stderr)")
        }
        #expect(try v.listed().isEmpty)
    }

    // 2. A size of 2^64-1 (a compressed item, so absorb cannot tell without decoding).
    @Test(arguments: [ItemFlags.xz, .zstd])
    func hugeSizeFieldNeverOverflows(_ codec: ItemFlags) throws {
        var d = HostileDropIn()
        d.flags = codec
        d.size = .max
        try d.drop(into: v.dir, item: try d.item(try HostileDropIn.compressed(Array("tiny".utf8), codec)))
        _ = try v.add(["add", try v.write("other.txt", Array("other".utf8))])
        let list = try v.run(["list"])
        expectNoCrash(list, "list")
        #expect(list.status == 0)
        let check = try v.run(["check"])
        expectNoCrash(check, "check")
        let deep = try v.run(["check", "--read-data"])
        expectNoCrash(deep, "check --read-data")
        #expect(deep.status == 14 && deep.stderr.contains("item 'hostile.bin'"), "\(deep.stderr)")
        let get = try v.run(["get", "hostile.bin"])
        #expect(get.status == 14, "\(get.stderr)")
        let send = try v.run(["move", "send", "--code-file", try v.write("code", Array("AAAA".utf8))])
        expectNoCrash(send, "move send")
        let rekey = try v.run(["rekey", "--yes"])
        expectNoCrash(rekey, "rekey")
        #expect(rekey.status == 0, "\(rekey.stderr)")
        #expect(try v.get("other.txt").stdout == Array("other".utf8))
    }

    // 3. A kit of 300 lines.
    @Test func kitWithManyLinesIsDamagedNotATrap() throws {
        var lines = [KitArmor.begin]
        for n in 1...300 { lines.append(String(format: "%02d ABCD EFGH IJKL MNOP QRST AA", n)) }
        lines.append(KitArmor.end)
        let kit = try v.write("kit.txt", Array(lines.joined(separator: "\n").utf8))
        let pass = try v.write("pass", Array("kit passphrase\n".utf8))
        let r = try v.run(["kit", "recover", kit, "--passphrase-file", pass, "--new-password-file", pass])
        expectNoCrash(r, "kit recover")
        #expect(r.status == 14, "\(r.stderr)")
    }

    // 4. Two drop-ins with the same name of the longest length.
    @Test func sameLongestNameTwiceStillOpens() throws {
        let long = String(repeating: "n", count: ManifestEntry.maxNameLength)
        let multi = String(repeating: "€", count: ManifestEntry.maxNameLength / 3)   // 1023 bytes of 3-byte characters
        for name in [long, long, long, multi, multi] {
            let r = try v.add(["add", "--name", name, try v.write("src", Array(name.utf8))])
            #expect(r.status == 0, "\(r.stderr)")
            try FileManager.default.removeItem(atPath: v.path + "/src")
        }
        for args in [["list"], ["check", "--repair"], ["list", "--json"]] {
            let r = try v.run(args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        // A name that is there again is a new version of that item.
        let items = try v.listed()
        #expect(items.count == 2 && Set(items.map(\.name)) == [long, multi])
        for (name, count) in [(long, 3), (multi, 2)] {
            let r = try v.run(["list", "--versions", name, "--json"])
            #expect((try JSONObject.parse(r.stdout)["items"] as? [Any])?.count == count)
        }
        let kit = try v.run(["kit", "export", "--generate", "--kdf-memory", "1", "--kdf-passes", "1", "-o", v.path + "/kit"])
        #expect(kit.status == 0, "\(kit.stderr)")
    }

    // 6. A FIFO where an envelope or a content file should be.
    @Test func fifoInTheInboxIsRefusedNotWaitedOn() throws {
        let blob = Hex.encode(SecureRandom.bytes(16))
        #expect(mkfifo(v.dir + "/inbox/" + blob + ".env", 0o600) == 0)
        let d = HostileDropIn()
        try d.drop(into: v.dir, item: nil)
        #expect(mkfifo(v.dir + "/inbox/" + d.blob + ".item", 0o600) == 0)
        let r = try v.run(["list"], timeout: 20)
        expectNoCrash(r, "list")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("2 drop-in"), "\(r.stderr)")
        let check = try v.run(["check"], timeout: 20)
        expectNoCrash(check, "check")
    }

    // 7. Entries that disagree with their content are refused at absorb, or
    //    (where only decoding tells) by every reader as check would.
    @Test func entriesThatDisagreeWithTheirContentAreRefusedAtAbsorb() throws {
        var wrongSize = HostileDropIn()
        wrongSize.name = Array("wrong-size".utf8)
        wrongSize.size = 100
        try wrongSize.drop(into: v.dir, item: try wrongSize.item(Array("five!".utf8)))
        var fileAsArchive = HostileDropIn()
        fileAsArchive.name = Array("file-with-archive-flag".utf8)
        fileAsArchive.flags = [.archive]
        fileAsArchive.size = 5
        try fileAsArchive.drop(into: v.dir, item: try fileAsArchive.item(Array("five!".utf8)))
        var folderWithoutArchive = HostileDropIn()
        folderWithoutArchive.name = Array("folder-without-flag".utf8)
        folderWithoutArchive.kind = 1
        folderWithoutArchive.size = 5
        try folderWithoutArchive.drop(into: v.dir, item: try folderWithoutArchive.item(Array("five!".utf8)))
        let r = try v.run(["list"])
        #expect(r.status == 0 && r.stderr.contains("3 drop-in"), "\(r.stderr)")
        #expect(try v.listed().isEmpty)
    }

    @Test(arguments: ["shorter", "longer", "trailing"], [ItemFlags.xz, .zstd])
    func compressedContentOfAnotherLengthIsRefusedByEveryReader(_ variant: String, _ codec: ItemFlags) throws {
        var d = HostileDropIn()
        d.name = Array("x.txt".utf8)
        d.flags = codec
        let content = Array("twelve bytes".utf8)
        var stream = try HostileDropIn.compressed(content, codec)
        switch variant {
        case "shorter": d.size = 20
        case "longer": d.size = 5
        default: d.size = UInt64(content.count); stream += [0, 0, 0, 0, 1]
        }
        try d.drop(into: v.dir, item: try d.item(stream))
        #expect(try v.listed().map(\.name) == ["x.txt"])
        let get = try v.run(["get", "x.txt"])
        #expect(get.status == 14, "get: \(get.stderr)")
        let out = v.path + "/out.txt"
        let file = try v.run(["get", "x.txt", "-o", out])
        #expect(file.status == 14 && !FileManager.default.fileExists(atPath: out), "get -o: \(file.stderr)")
        let restore = try v.run(["restore", "x.txt", "--to", v.path])
        #expect(restore.status == 14 && !FileManager.default.fileExists(atPath: v.path + "/x.txt"), "restore: \(restore.stderr)")
        let opened = try v.run(["open", "x.txt", "--with", "true"])
        #expect(opened.status == 14, "open: \(opened.stderr)")
        let check = try v.run(["check", "--read-data"])
        #expect(check.status == 14, "check: \(check.stderr)")
    }

    // 8. Names that would steer a terminal, and times no calendar prints.
    @Test func namesAreEscapedForTerminalsAndJSON() throws {
        let names = ["evil\u{202E}fdp.exe", "csi\u{9B}31m", "zero\u{200B}width", "line\u{2028}sep"]
        for name in names {
            let r = try v.add(["add", "--name", name, try v.write("src", [1])])
            #expect(r.status == 0, "\(r.stderr)")
            try FileManager.default.removeItem(atPath: v.path + "/src")
        }
        let list = try v.run(["list"])
        #expect(list.status == 0)
        let text = list.stdoutText
        for bad: Unicode.Scalar in ["\u{202E}", "\u{9B}", "\u{200B}", "\u{2028}"] {
            #expect(!text.unicodeScalars.contains(bad), "list printed U+\(String(bad.value, radix: 16)) raw")
        }
        #expect(text.contains("evil\\u{202E}fdp.exe") && text.contains("csi\\x9B31m"))
        let json = try v.run(["list", "--json"])
        let raw = json.stdoutText
        for bad: Unicode.Scalar in ["\u{202E}", "\u{9B}", "\u{200B}", "\u{2028}"] {
            #expect(!raw.unicodeScalars.contains(bad), "--json printed U+\(String(bad.value, radix: 16)) raw")
        }
        #expect(raw.contains("\\u202e") && raw.contains("\\u009b"))
        #expect(Set(try ListedItem.parse(json.stdout).map(\.name)) == Set(names))
    }

    @Test func extremeTimesAreRefusedAtAbsorb() throws {
        for (added, modified) in [(Int64.max, Int64(0)), (Int64(0), Int64.min), (Int64(253_402_300_800), Int64(0))] {
            var d = HostileDropIn()
            d.added = added
            d.modified = modified
            d.size = 1
            try d.drop(into: v.dir, item: try d.item([1]))
        }
        var fine = HostileDropIn()
        fine.name = Array("fine".utf8)
        fine.size = 1
        fine.modified = -86_400   // 1969 is a fine date
        try fine.drop(into: v.dir, item: try fine.item([1]))
        let r = try v.run(["list", "--json"])
        #expect(r.status == 0 && r.stderr.contains("3 drop-in"), "\(r.stderr)")
        #expect(r.stdoutText.contains("\"modified\":\"1969-12-31T00:00:00Z\""), "\(r.stdoutText)")
    }

    // 9. A crash prints no registers or memory.
    @Test func aCrashPrintsNoMemory() throws {
        let stderrPipe = Pipe()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIHarness.binary)
        p.arguments = ["--vault", v.path + "/incoming", "move", "receive", "--no-verify", "--listen", "127.0.0.1:0"]
        p.standardError = stderrPipe
        p.standardOutput = FileHandle.nullDevice
        p.environment = v.environment()
        try p.run()
        Thread.sleep(forTimeInterval: 1)
        kill(p.processIdentifier, SIGSEGV)
        // (The runtime's backtracer, when it runs, may keep the process alive.)
        let deadline = Date().addingTimeInterval(10)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        let err = String(decoding: stderrPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGSEGV)
        for leak in ["Registers", "rax 0x", "Backtracing", "crashed"] {
            #expect(!err.contains(leak), "stderr after a crash holds '\(leak)':\n\(err)")
        }
    }

    // 10. Kit lines typed without spaces, or with tabs.
    @Test func kitArmorIgnoresSpacingAndCase() throws {
        let pass = try v.write("kitpass", Array("kit passphrase 1\n".utf8))
        let exported = try v.run(["kit", "export", "--passphrase-file", pass, "--kdf-memory", "1", "--kdf-passes", "1"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let lines = exported.stdoutText.split(separator: "\n").map(String.init)
        guard let b = lines.firstIndex(of: KitArmor.begin), let e = lines.firstIndex(of: KitArmor.end) else {
            Issue.record("no armored block in \(exported.stdoutText)")
            return
        }
        let block = Array(lines[(b + 1)..<e])
        let variants = [
            block.map { $0.replacingOccurrences(of: " ", with: "") },
            block.map { $0.replacingOccurrences(of: " ", with: "\t").lowercased() },
            block.map { $0.map { "\($0) " }.joined() },
        ]
        for (i, variant) in variants.enumerated() {
            let kit = try v.write("kit\(i)", Array(([KitArmor.begin] + variant + [KitArmor.end]).joined(separator: "\n").utf8))
            let r = try v.run(["kit", "recover", kit, "--passphrase-file", pass, "--new-password-file", v.passwordFile])
            #expect(r.status == 0, "variant \(i): \(r.stderr)")
        }
    }

    // 11. A far-future time in the attempts file.
    @Test func farFutureAttemptTimeWaitsAtMostThirtyMinutes() throws {
        var b = Array("VAULTATT".utf8) + [1, 0, 0, 0] + [0, 0, 0, 9]
        b += withUnsafeBytes(of: Int64.max.bigEndian, Array.init)
        try Data(b).write(to: URL(fileURLWithPath: v.dir + "/attempts"))
        let r = try v.run(["list"])
        #expect(r.status == 13)
        #expect(r.stderr.hasPrefix("vault: too many wrong passwords; try again in 30 min (at "), "\(r.stderr)")
        // The time was brought back to now + 30 min: waiting that long ends it.
        let state = Array(try Data(contentsOf: URL(fileURLWithPath: v.dir + "/attempts")))
        let notBefore = Int64(bitPattern: state[16..<24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        #expect(abs(notBefore - (Int64(Date().timeIntervalSince1970) + 1800)) < 60)
    }

    // 12. The small ones.
    @Test func passwordCommandWithABackgroundChildDoesNotWaitForIt() throws {
        let start = Date()
        let cmd = "cat '\(v.passwordFile)'; sleep 30 </dev/null 2>/dev/null &"
        let listed = try CLIHarness.run(["--vault", v.dir, "--password-command", cmd, "list"],
                                        environment: v.environment(), cwd: v.path, timeout: 20)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(Date().timeIntervalSince(start) < 15)
    }

    @Test func vaultPathThroughASymlinkWithATrailingSlashIsRefused() throws {
        let link = v.path + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: v.dir)
        for path in [link, link + "/", link + "//"] {
            let r = try CLIHarness.run(["--vault", path, "info"], environment: v.environment(), cwd: v.path)
            #expect(r.status == 1 && r.stderr.hasPrefix("vault: refusing '\(link)'"), "\(path): \(r.stderr)")
        }
    }
}

/// Issue "Hostile bytes", case 5: each secret was its own mmap and mlock,
/// so ~16,000 waiting drop-ins made every unlock trap.
@Suite("Many drop-ins")
struct ManyDropInTests {
    @Test func twentyThousandWaitingDropInsAreAbsorbed() throws {
        let v = try VaultFixture()
        // Four names, 5,000 versions each (a name holds at most 10,000).
        let count = 20_000
        for i in 0..<count {
            var d = HostileDropIn()
            d.name = Array("same name \(i % 4).txt".utf8)
            d.size = 2
            try d.drop(into: v.dir, item: try d.item([UInt8(i & 0xff), UInt8(i >> 8 & 0xff)]))
        }
        let r = try v.run(["list", "--json"], timeout: 300)
        #expect(r.status == 0, "\(r.stderr)")
        let names = try ListedItem.parse(r.stdout).map(\.name)
        #expect(names.sorted() == (0..<4).map { "same name \($0).txt" })
        let versions = try v.run(["list", "--versions", "same name 3.txt", "--json"], timeout: 60)
        #expect((try JSONObject.parse(versions.stdout)["items"] as? [Any])?.count == count / 4)
        let got = try v.run(["get", "same name 3.txt", "--version", "77"], timeout: 60)
        #expect(got.status == 0 && got.stdout.count == 2, "\(got.stderr)")
    }
}

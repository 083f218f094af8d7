import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `vault kit export` / `kit recover` through the built binary.
@Suite struct KitTests {
    let cheapKit = ["--kdf-memory", "1", "--kdf-passes", "1"]

    /// A vault with two items and a kit for it (passphrase in `kp`).
    func vaultWithKit() throws -> (VaultFixture, kit: String, passphrase: String) {
        let v = try VaultFixture()
        try v.write("a.txt", Array("alpha".utf8))
        try v.write("b.bin", (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(try v.add(["add", "a.txt", "b.bin"]).status == 0)
        let kp = try v.write("kp", Array("kit passphrase 123\n".utf8), mode: 0o600)
        let kit = v.path + "/kit.txt"
        let r = try v.run(["kit", "export", "-o", kit, "--passphrase-file", kp] + cheapKit)
        #expect(r.status == 0, "\(r.stderr)")
        return (v, kit, kp)
    }

    @Test func exportPasswdForgetRecover() throws {
        let (v, kit, kp) = try vaultWithKit()
        let attrs = try FileManager.default.attributesOfItem(atPath: kit)
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
        let text = try String(contentsOfFile: kit, encoding: .utf8)
        #expect(text.contains("Whoever has this kit and its passphrase can open your vault"))
        // Change the password twice and "forget" it.
        for n in 1...2 {
            let new = try v.write("new\(n)", Array("password \(n)\n".utf8), mode: 0o600)
            let current = n == 1 ? v.passwordFile : v.path + "/new1"
            #expect(try v.run(["passwd", "--new-password-file", new], password: current).status == 0)
        }
        let fresh = try v.write("fresh", Array("recovered password\n".utf8), mode: 0o600)
        let r = try v.add(["kit", "recover", kit, "--passphrase-file", kp, "--new-password-file", fresh])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try v.run(["get", "a.txt"], password: fresh).stdout == Array("alpha".utf8))
        #expect(try v.run(["check", "--read-data"], password: fresh).status == 0)
        #expect(try v.run(["list"], password: v.path + "/new2").status == 12)
    }

    @Test func aCopiedDirectoryAndTheKitAreEnough() throws {
        let (v, kit, kp) = try vaultWithKit()
        let copy = v.path + "/copy"
        try FileManager.default.copyItem(atPath: v.dir, toPath: copy)
        let fresh = try v.write("fresh", Array("new machine\n".utf8), mode: 0o600)
        let r = try CLIHarness.run(["--vault", copy, "kit", "recover", kit, "--passphrase-file", kp, "--new-password-file", fresh],
                                   environment: v.environment(), cwd: v.path)
        #expect(r.status == 0, "\(r.stderr)")
        let get = try CLIHarness.run(["--vault", copy, "--password-file", fresh, "get", "a.txt"], environment: v.environment(), cwd: v.path)
        #expect(get.stdout == Array("alpha".utf8))
    }

    @Test func wrongPassphraseDamagedKitOtherVaultStaleKit() throws {
        let (v, kit, kp) = try vaultWithKit()
        let fresh = try v.write("fresh", Array("x password\n".utf8), mode: 0o600)
        let wrong = try v.write("wrong", Array("not the passphrase\n".utf8), mode: 0o600)
        var r = try v.add(["kit", "recover", kit, "--passphrase-file", wrong, "--new-password-file", fresh])
        #expect(r.status == 12 && r.stderr.hasPrefix("vault: wrong kit passphrase\n"))
        // A typo in line 3 is reported by its number.
        var lines = try String(contentsOfFile: kit, encoding: .utf8).components(separatedBy: "\n")
        let i = lines.firstIndex { $0.hasPrefix("03 ") }!
        var chars = Array(lines[i])
        chars[3] = chars[3] == "A" ? "B" : "A"
        lines[i] = String(chars)
        let damaged = try v.write("damaged.txt", Array(lines.joined(separator: "\n").utf8))
        r = try v.add(["kit", "recover", damaged, "--passphrase-file", kp, "--new-password-file", fresh])
        #expect(r.status == 14 && r.stderr.hasPrefix("vault: recovery kit line 03: checksum does not match: check "), "\(r.stderr)")
        // Another vault.
        let other = try VaultFixture()
        r = try other.add(["kit", "recover", kit, "--passphrase-file", kp, "--new-password-file", fresh])
        #expect(r.status == 1 && r.stderr.hasPrefix("vault: this recovery kit belongs to another vault\n"))
        // Stale after rekey.
        #expect(try v.run(["rekey", "--yes"]).status == 0)
        r = try v.add(["kit", "recover", kit, "--passphrase-file", kp, "--new-password-file", fresh])
        #expect(r.status == 1 && r.stderr.hasPrefix("vault: this recovery kit is from before the vault was rekeyed"))
    }

    /// A kit file that is a FIFO or a device is refused before a byte is
    /// read (a FIFO with no writer used to block for ever); '-' is the way
    /// to read one from a pipe. (The timeout only detects a hang.)
    @Test func aKitFileThatIsNotARegularFileIsRefusedAtOnce() throws {
        let (v, _, kp) = try vaultWithKit()
        let fresh = try v.write("fresh", Array("recovered password\n".utf8), mode: 0o600)
        let fifo = v.path + "/kit.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, kind) in [(fifo, "a FIFO (named pipe)"), ("/dev/zero", "a character device"), (v.path, "a directory")] {
            let r = try CLIHarness.run(["--vault", v.dir, "kit", "recover", path, "--passphrase-file", kp, "--new-password-file", fresh],
                                       environment: v.environment(), cwd: v.path, timeout: 20)
            #expect(!r.timedOut && r.status == 1, "\(path): \(r)")
            #expect(r.stderr == "vault: recovery kit '\(path)' is \(kind), not a regular file\n"
                    + "hint: to read the kit from a pipe, give '-' and send it to standard input\n", "\(path): \(r.stderr)")
        }
        #expect(try v.run(["list"]).status == 0, "the password still opens the vault")
    }

    @Test func typedBackByHandFromStdin() throws {
        let (v, kit, kp) = try vaultWithKit()
        let text = try String(contentsOfFile: kit, encoding: .utf8)
        // Only the block, lower case, extra spaces: as a person types it.
        let block = text.components(separatedBy: "\n").filter { $0.hasPrefix("-----") || $0.first?.isNumber == true }
            .map { $0.hasPrefix("-----") ? $0 : $0.lowercased().replacingOccurrences(of: " ", with: "  ") }
        let fresh = try v.write("fresh", Array("typed back\n".utf8), mode: 0o600)
        let r = try v.add(["kit", "recover", "-", "--passphrase-file", kp, "--new-password-file", fresh],
                          stdin: Array(block.joined(separator: "\n").utf8))
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func generatedPassphraseIsPrintedOnceAndWorks() throws {
        let v = try VaultFixture()
        let kit = v.path + "/kit.txt"
        let r = try v.run(["kit", "export", "-o", kit, "--generate"] + cheapKit)
        #expect(r.status == 0)
        let line = r.stdoutText.components(separatedBy: "\n").first { $0.hasPrefix("kit passphrase (shown once") }!
        let passphrase = String(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
        #expect(passphrase.count == 32)   // 26 base32 characters in groups of 4 (130 bits)
        let kp = try v.write("kp", Array((passphrase + "\n").utf8), mode: 0o600)
        let fresh = try v.write("fresh", Array("from generated\n".utf8), mode: 0o600)
        #expect(try v.add(["kit", "recover", kit, "--passphrase-file", kp, "--new-password-file", fresh]).status == 0)
        #expect(try v.run(["kit", "export", "-o", kit, "--generate"] + cheapKit).status == 15)   // never overwrites
    }

    /// A generated passphrase opens its kit typed in lower case, with
    /// spaces for dashes or none at all, as the lines do; the kit says so.
    /// A chosen passphrase is used as typed: another case is wrong (exit
    /// 12), and one that merely looks like a generated passphrase (26
    /// letters, lower case) still opens the kit made with it.
    @Test func aGeneratedPassphraseIsReadAsTheLinesAre() throws {
        let v = try VaultFixture()
        let kit = v.path + "/kit.txt"
        let r = try v.run(["kit", "export", "-o", kit, "--generate"] + cheapKit)
        #expect(r.status == 0)
        #expect(try String(contentsOfFile: kit, encoding: .utf8).contains("Case, spaces and dashes\ndo not matter, in the lines nor in a passphrase that 'vault kit\nexport --generate' made."))
        let line = r.stdoutText.components(separatedBy: "\n").first { $0.hasPrefix("kit passphrase (shown once") }!
        let passphrase = String(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
        for (i, typed) in [passphrase.lowercased(), passphrase.lowercased().replacingOccurrences(of: "-", with: " "),
                           passphrase.replacingOccurrences(of: "-", with: "")].enumerated() {
            let kp = try v.write("kp\(i)", Array((typed + "\n").utf8), mode: 0o600)
            let fresh = try v.write("fresh\(i)", Array("new password \(i)\n".utf8), mode: 0o600)
            let recovered = try v.add(["kit", "recover", kit, "--passphrase-file", kp, "--new-password-file", fresh])
            #expect(recovered.status == 0, "\(typed): \(recovered.stderr)")
        }

        let w = try VaultFixture()  // the recoveries above changed v's password
        let chosen = try w.write("chosen", Array("abcdefghijklmnopqrstuvwxyz\n".utf8), mode: 0o600)
        let kit2 = w.path + "/kit2.txt"
        #expect(try w.run(["kit", "export", "-o", kit2, "--passphrase-file", chosen] + cheapKit).status == 0)
        let fresh = try w.write("fresh", Array("yet another password\n".utf8), mode: 0o600)
        let upper = try w.write("upper", Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ\n".utf8), mode: 0o600)
        let wrong = try w.add(["kit", "recover", kit2, "--passphrase-file", upper, "--new-password-file", fresh])
        #expect(wrong.status == 12 && wrong.stderr.hasPrefix("vault: wrong kit passphrase\n"), "\(wrong.stderr)")
        let right = try w.add(["kit", "recover", kit2, "--passphrase-file", chosen, "--new-password-file", fresh])
        #expect(right.status == 0, "\(right.stderr)")
    }

    @Test func shortPassphraseIsRefused() throws {
        let v = try VaultFixture()
        let kp = try v.write("kp", Array("short\n".utf8), mode: 0o600)
        let r = try v.run(["kit", "export", "--passphrase-file", kp] + cheapKit)
        #expect(r.status == 2 && r.stderr.hasPrefix("vault: the kit passphrase must have at least 8 characters\n"))
    }

    /// The QR code in the kit, read back from its block characters into a
    /// module matrix and drawn as a PBM, decodes (zbarimg) to exactly the
    /// armored block.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg"), "needs zbar-tools"))
    func qrCodeDecodesToTheArmoredBlock() throws {
        let (v, kit, _) = try vaultWithKit()
        let lines = try String(contentsOfFile: kit, encoding: .utf8).components(separatedBy: "\n")
        let begin = lines.firstIndex(of: "-----BEGIN VAULT RECOVERY KIT-----")!
        let end = lines.firstIndex(of: "-----END VAULT RECOVERY KIT-----")!
        let armored = lines[begin...end].joined(separator: "\n")
        let qrLines = lines[(end + 1)...].filter { $0.contains("█") || $0.contains("▀") || $0.contains("▄") }
        var rows: [[Bool]] = []
        for line in qrLines {
            let cells = Array(line)
            rows.append(cells.map { $0 == "█" || $0 == "▀" })
            rows.append(cells.map { $0 == "█" || $0 == "▄" })
        }
        let width = rows.map(\.count).max()!
        let scale = 4, border = 8
        let w = (width + 2 * border) * scale, h = (rows.count + 2 * border) * scale
        var pbm = Array("P1\n\(w) \(h)\n".utf8)
        for y in 0..<h {
            for x in 0..<w {
                let (mx, my) = (x / scale - border, y / scale - border)
                let dark = my >= 0 && my < rows.count && mx >= 0 && mx < rows[my].count && rows[my][mx]
                pbm += Array((dark ? "1 " : "0 ").utf8)
            }
            pbm.append(10)
        }
        let image = try v.write("qr.pbm", pbm)
        // QR codes only: with every symbology on, zbar now and then also
        // "finds" a linear barcode (an EAN or I2/5 of digits) in the modules
        // and prints it as an extra line (seen twice under load in CI).
        let r = try CLIHarness.run(["--raw", "-q", "-Sdisable", "-Sqrcode.enable", image], environment: v.environment(), cwd: v.path,
                                   executable: "/usr/bin/zbarimg")
        #expect(r.status == 0)
        #expect(r.stdoutText == armored + "\n")
    }
}

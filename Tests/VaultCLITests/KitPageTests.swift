import Foundation
import Testing

/// `vault kit export --html FILE`, through the built binary, then printed
/// and screenshotted by headless Chromium (Debian `chromium`, which
/// `make deps` installs): one page on A4 and on Letter, and the QR code read
/// back from the screenshot (zbarimg) is the kit's armored block.
@Suite struct KitPageTests {
    static let chromium = "/usr/bin/chromium"
    static let hasChromium = FileManager.default.isExecutableFile(atPath: chromium)

    /// A vault and its HTML kit (path and text).
    func exported() throws -> (VaultFixture, html: String, page: String) {
        let v = try VaultFixture()
        let kp = try v.write("kp", Array("kit passphrase 123\n".utf8), mode: 0o600)
        let html = v.path + "/kit.html"
        let r = try v.run(["kit", "export", "--html", html, "--passphrase-file", kp, "--kdf-memory", "1", "--kdf-passes", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        return (v, html, page)
    }

    /// The armored block as the page shows it (between BEGIN and END).
    static func armored(in page: String) throws -> String {
        let begin = try #require(page.range(of: "-----BEGIN VAULT RECOVERY KIT-----"))
        let end = try #require(page.range(of: "-----END VAULT RECOVERY KIT-----"))
        return String(page[begin.lowerBound..<end.upperBound])
    }

    @Test func aSelfContainedPageThatRecovers() throws {
        let (v, html, page) = try exported()
        #expect((try FileManager.default.attributesOfItem(atPath: html)[.posixPermissions] as? Int) == 0o600)
        // Nothing to load from anywhere: no links, scripts, fonts or images.
        for outside in ["http", "<script", "src=", "url(", "@import", "<link", "<img"] {
            #expect(!page.contains(outside), "\(outside)")
        }
        #expect(page.contains("<svg") && page.contains("font-family: monospace"))
        #expect(page.contains("Case, spaces and dashes do not matter"))
        let info = try v.run(["info"]).stdoutText
        let fingerprint = try #require(info.split(separator: "\n").first { $0.hasPrefix("public key fingerprint: ") })
            .dropFirst("public key fingerprint: ".count)
        #expect(page.contains("<dt>Public key fingerprint</dt><dd>\(fingerprint)</dd>"), "\(fingerprint)")
        #expect(page.contains("<dt>Created</dt><dd>20"))
        // The block on the page is a kit: recover with it.
        let armored = try Self.armored(in: page)
        let kitFile = try v.write("typed.txt", Array(armored.utf8))
        let fresh = try v.write("fresh", Array("from the page\n".utf8), mode: 0o600)
        let kp = v.path + "/kp"
        let r = try v.add(["kit", "recover", kitFile, "--passphrase-file", kp, "--new-password-file", fresh])
        #expect(r.status == 0, "\(r.stderr)")
        // Never over an existing file.
        #expect(try v.run(["kit", "export", "--html", html, "--passphrase-file", kp]).status == 15)
    }

    func chromiumRun(_ args: [String], in v: VaultFixture) throws -> CLIHarness.Result {
        try CLIHarness.run(["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + v.path + "/chromium"] + args,
                           environment: v.environment(), cwd: v.path, timeout: 120, executable: Self.chromium)
    }

    @Test(.enabled(if: hasChromium, "needs Debian's chromium (make deps installs it) to print the page"))
    func onePageOnA4AndLetterAndTheQRCodeScans() throws {
        let (v, html, page) = try exported()
        for size in ["A4", "letter"] {
            // The page sets no size, so the printer's paper applies; here each paper in turn.
            let sized = page.replacingOccurrences(of: "@page { margin: 12mm; }", with: "@page { size: \(size); margin: 12mm; }")
            #expect(sized != page)
            let file = try v.write("kit-\(size).html", Array(sized.utf8))
            let pdf = v.path + "/kit-\(size).pdf"
            let r = try chromiumRun(["--no-pdf-header-footer", "--print-to-pdf=" + pdf, "file://" + file], in: v)
            #expect(r.status == 0, "\(r.stderr)")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: pdf))
            let text = String(decoding: bytes, as: UTF8.self)
            // "/Type /Page" once per page ("/Type /Pages" is the page tree).
            let pages = text.matches(of: /\/Type\s*\/Page(?![s])/).count
            #expect(pages == 1, "\(size): \(pages) pages")
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/pdfinfo") {
                let info = try CLIHarness.run([pdf], environment: v.environment(), cwd: v.path, executable: "/usr/bin/pdfinfo")
                #expect(info.stdoutText.contains("Pages:           1"), "\(info.stdoutText)")
                #expect(info.stdoutText.contains(size == "A4" ? "(A4)" : "(letter)"), "\(info.stdoutText)")
            }
        }
        let shot = v.path + "/kit.png"
        let r = try chromiumRun(["--hide-scrollbars", "--window-size=900,1300", "--screenshot=" + shot, "file://" + html], in: v)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg"), "zbar-tools (make deps installs it)")
        let scanned = try CLIHarness.run(["--raw", "-q", "-Sdisable", "-Sqrcode.enable", shot], environment: v.environment(), cwd: v.path,
                                         executable: "/usr/bin/zbarimg")
        #expect(scanned.status == 0, "\(scanned.stderr)")
        #expect(scanned.stdoutText == (try Self.armored(in: page)) + "\n")
    }
}

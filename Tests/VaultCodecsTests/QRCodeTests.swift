import Foundation
import Testing
import VaultCodecs

/// Texts to encode: short, URL-like, and a recovery-kit-shaped block of
/// base32 lines (~300 characters with newlines), the case the CLI prints.
private enum QRSamples {
    static let recoveryKit: String = {
        var rng = TestBytes(seed: 0x5152_436F_6465)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var lines = ["-----BEGIN VAULT RECOVERY KIT-----"]
        for _ in 0..<5 {
            lines.append(String((0..<48).map { _ in alphabet[Int(rng.next() % 32)] }))
        }
        lines.append("-----END VAULT RECOVERY KIT-----")
        return lines.joined(separator: "\n") + "\n"
    }()

    static let all: [String] = [
        "a",
        "hello, vault",
        "0123456789",
        "vault://item/9f86d081884c7d65?v=1&label=Bank%20login",
        recoveryKit,
    ]
}

@Suite struct QRCodeTests {
    static let zbarimg = "/usr/bin/zbarimg"

    @Test func recoveryKitSampleHasTheExpectedShape() {
        #expect(QRSamples.recoveryKit.count >= 300)
        #expect(QRSamples.recoveryKit.contains("\n"))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: QRCodeTests.zbarimg),
                   "zbarimg not found at /usr/bin/zbarimg; install zbar-tools to run the decode test"),
          arguments: QRSamples.all)
    func zbarimgDecodesThePBMToTheInput(text: String) throws {
        let code = try QRCode(encoding: text)
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("vault-qr-\(UUID().uuidString).pbm")
        try Data(code.renderPBM()).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.zbarimg)
        process.arguments = ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", file.path]  // QR only: no stray linear barcodes
        let stdout = Pipe()
        process.standardOutput = stdout
        // zbarimg complains on stderr when there is no D-Bus; that is noise here.
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()

        #expect(process.terminationStatus == 0)
        // --raw prints the data and one newline.
        #expect(String(decoding: output, as: UTF8.self) == text + "\n")
    }

    /// The SVG's path covers exactly the dark modules, offset by the quiet
    /// zone, on a white square of the whole symbol.
    @Test(arguments: QRSamples.all)
    func svgRenderingIsExactlyTheMatrix(text: String) throws {
        let code = try QRCode(encoding: text)
        let n = code.size + 8
        let svg = code.renderSVG(side: "50mm")
        #expect(svg.hasPrefix("<svg viewBox=\"0 0 \(n) \(n)\" width=\"50mm\" height=\"50mm\""))
        #expect(svg.contains("<rect width=\"\(n)\" height=\"\(n)\" fill=\"#fff\"/>"))
        let d = try #require(svg.firstMatch(of: /d="([^"]*)"/)).output.1
        var dark = Set<Int>()
        for run in d.matches(of: /M(\d+) (\d+)h(\d+)v1h-\3z/) {
            let (x, y, w) = (Int(run.output.1)!, Int(run.output.2)!, Int(run.output.3)!)
            for i in 0..<w { #expect(dark.insert((y - 4) * code.size + x - 4 + i).inserted) }
        }
        #expect(d.replacing(/M\d+ \d+h\d+v1h-\d+z/, with: "").isEmpty)
        for y in 0..<code.size {
            for x in 0..<code.size { #expect(dark.contains(y * code.size + x) == code.isDark(x: x, y: y)) }
        }
    }

    @Test(arguments: QRSamples.all)
    func textRenderingHasTheDocumentedShape(text: String) throws {
        let code = try QRCode(encoding: text)
        let rendered = code.renderText()
        #expect(rendered.hasSuffix("\n"))
        let lines = rendered.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == (code.size + 8 + 1) / 2)
        for line in lines {
            #expect(line.count == code.size + 8)
            #expect(line.allSatisfy { "▀▄█ ".contains($0) })
        }
    }

    @Test(arguments: QRSamples.all)
    func textRenderingIsExactlyTheMatrix(text: String) throws {
        let code = try QRCode(encoding: text)
        let q = 4
        let side = code.size + 2 * q
        // Rebuild the module matrix, quiet zone included, from the characters.
        var parsed = [[Bool]](repeating: [Bool](repeating: false, count: side), count: side + 1)
        let lines = code.renderText().split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for (row, line) in lines.enumerated() {
            for (column, character) in line.enumerated() {
                let (top, bottom): (Bool, Bool)
                switch character {
                case "█": (top, bottom) = (true, true)
                case "▀": (top, bottom) = (true, false)
                case "▄": (top, bottom) = (false, true)
                case " ": (top, bottom) = (false, false)
                default: Issue.record("unexpected character \(character)"); return
                }
                parsed[2 * row][column] = top
                parsed[2 * row + 1][column] = bottom
            }
        }
        var mismatches = 0
        for y in 0..<(side + 1) {
            for x in 0..<side {
                let inSymbol = (q..<(q + code.size)).contains(x) && (q..<(q + code.size)).contains(y)
                let expected = inSymbol ? code.isDark(x: x - q, y: y - q) : false
                if parsed[y][x] != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func pbmHeaderAndSize() throws {
        let code = try QRCode(encoding: "hello, vault")
        #expect(code.size == 21)
        let scale = 3
        let pbm = code.renderPBM(scale: scale)
        let side = (code.size + 8) * scale
        let header = Array("P4\n\(side) \(side)\n".utf8)
        #expect(Array(pbm.prefix(header.count)) == header)
        #expect(pbm.count == header.count + (side + 7) / 8 * side)
    }

    @Test func sizeGrowsWithTheText() throws {
        let small = try QRCode(encoding: "a")
        let large = try QRCode(encoding: QRSamples.recoveryKit)
        #expect(small.size == 21)
        #expect(large.size > small.size)
        #expect((large.size - 17) % 4 == 0)
    }

    @Test func tooLongTextThrows() {
        // Version 40 at level M holds at most 2331 bytes in 8-bit mode.
        #expect(throws: QRCodeError.tooLong) {
            try QRCode(encoding: String(repeating: "x", count: 3000))
        }
    }

    @Test func nulThrows() {
        #expect(throws: QRCodeError.containsNUL) {
            try QRCode(encoding: "a\u{0}b")
        }
    }
}

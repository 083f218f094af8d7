import Foundation
import VaultCodecs

// The recovery kit as one printable HTML page (`vault kit export --html`;
// docs/FORMAT.md, "Recovery kit"): the same armored block as the text kit
// (KitArmor.swift) in a monospace font, the same block as an inline SVG QR
// code (dark on a white square), what to do with it, the vault id,
// fingerprint and date, and a line to write the passphrase on. Self-contained:
// no scripts, fonts, images or links to load, so it prints the same offline.
// Sized to fit one page of A4 (210 x 297 mm) and of US Letter (216 x 279 mm)
// with 12 mm margins: 186 x 255 mm of content at most (KitPageTests print it
// both ways in headless Chromium). Readers use only the armored block.

public enum KitPage {
    public static func html(kit: RecoveryKit, fingerprint: String, created: Date) throws -> String {
        let armored = KitArmor.armor(kit.bytes)
        let date = ISO8601DateFormatter().string(from: created)
        let hex = Hex.encode(kit.vaultID)
        let id = stride(from: 0, to: 32, by: 8).map { i in
            String(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 8)])
        }.joined(separator: "-")
        let qr = try QRCode(encoding: armored).renderSVG(side: "58mm")
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>Vault recovery kit \(escape(id))</title>
            <style>
            @page { margin: 12mm; }
            * { box-sizing: border-box; }
            body { margin: 0; font: 10.5pt/1.35 sans-serif; color: #000; background: #fff; }
            main { width: 186mm; max-height: 255mm; overflow: hidden; }
            h1 { font-size: 17pt; margin: 0 0 2mm; }
            p, ol { margin: 0 0 2.5mm; }
            ol { padding-left: 6mm; }
            .warning { border: 0.6mm solid #000; padding: 2.5mm 3mm; font-weight: bold; }
            dl { display: grid; grid-template-columns: 42mm 1fr; gap: 0.8mm 3mm; margin: 0 0 3mm; }
            dt { font-weight: bold; }
            dd { margin: 0; font-family: monospace; word-break: break-all; }
            code, pre { font-family: monospace; }
            code { white-space: nowrap; }
            @media screen { body { margin: 12mm; } }
            .kit { display: flex; gap: 6mm; align-items: flex-start; margin: 3mm 0; }
            pre { font-size: 11pt; line-height: 1.5; margin: 0; padding: 3mm; border: 0.3mm solid #000; }
            .passphrase { margin-top: 4mm; border-bottom: 0.3mm solid #000; height: 9mm; }
            small { font-size: 8.5pt; }
            </style>
            </head>
            <body>
            <main>
            <h1>Vault recovery kit</h1>
            <p class="warning">Whoever has this kit and its passphrase can open your vault and read everything in it.
            Keep it offline and safe: printed, in a safe or with your important papers. Do not store it next to the vault.</p>
            <dl>
            <dt>Vault id</dt><dd>\(escape(id))</dd>
            <dt>Public key fingerprint</dt><dd>\(escape(fingerprint))</dd>
            <dt>Created</dt><dd>\(escape(date))</dd>
            </dl>
            <p><b>To recover</b>, with a copy of the vault directory (a backup, a USB copy, a remote):</p>
            <ol>
            <li>Scan the QR code into a file, or type the block back in by hand: <code>vault --vault DIR kit recover -</code>
            (with a file: <code>vault --vault DIR kit recover FILE</code>).</li>
            <li>Give the kit passphrase, then choose a new vault password. The vault then opens with it.</li>
            </ol>
            <p>Each line starts with its number and ends with a checksum, so a typo is found by line, and only that
            line is typed again. Case, spaces and dashes do not matter, in the lines nor in a passphrase that
            <code>vault kit export --generate</code> made. This kit stops working after <code>vault rekey</code>;
            export a new one then.</p>
            <div class="kit">
            <pre>\(escape(armored))</pre>
            \(qr)
            </div>
            <p class="passphrase"><small>Kit passphrase (write it here only if this page is kept as safely as the vault itself):</small></p>
            </main>
            </body>
            </html>

            """
    }

    /// Text for HTML content and attribute values.
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}

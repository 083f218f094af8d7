import Foundation
import VaultCodecs

// The recovery kit file (docs/FORMAT.md, "Recovery kit"): plain text to
// print or store offline. What it is and how to use it, the vault id and
// public-key fingerprint, the date, the armored payload (KitArmor.swift),
// and the same armored block as a QR code drawn with block characters.
// Readers use only the armored block; everything else is for people.

public enum KitDocument {
    public static func text(kit: RecoveryKit, fingerprint: String, created: Date) throws -> String {
        let armored = KitArmor.armor(kit.bytes)
        let date = ISO8601DateFormatter().string(from: created)
        let id = stride(from: 0, to: 32, by: 8).map { i -> String in
            let hex = Hex.encode(kit.vaultID)
            let s = hex.index(hex.startIndex, offsetBy: i)
            return String(hex[s..<hex.index(s, offsetBy: 8)])
        }.joined(separator: "-")
        return """
            VAULT RECOVERY KIT

            Whoever has this kit and its passphrase can open your vault and read
            everything in it. Keep it offline and safe: printed, in a safe or with
            your important papers. Do not store it next to the vault.

            Vault id:               \(id)
            Public key fingerprint: \(fingerprint)
            Created:                \(date)

            To recover, with a copy of the vault directory:
                vault --vault DIR kit recover THIS-FILE
            or type the block below back in by hand:
                vault --vault DIR kit recover -
            It asks for the kit passphrase and a new vault password. Each line
            starts with its number and ends with a checksum, so a typo is found
            by line, and only that line is typed again. Case, spaces and dashes
            do not matter, in the lines nor in a passphrase that 'vault kit
            export --generate' made. This kit stops working after 'vault rekey'.

            \(armored)

            The same block as a QR code:

            \(try QRCode(encoding: armored).renderText())
            """
    }
}

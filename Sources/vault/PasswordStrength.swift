import VaultCrypto

/// The rule for a new vault password (init, passwd, kit recover). Argon2id
/// slows each guess; it cannot save a password that is among the first
/// guesses. Under 8 characters is refused (the kit passphrase's minimum
/// too); under 12, or one of the most common passwords, gets a warning and
/// is accepted. `--allow-weak-password` lets tests and demos go under 8.
enum PasswordStrength {
    static let minimum = 8
    static let recommended = 12

    /// Why `secret` is refused; nil when it is accepted.
    static func refusal(_ secret: SecretBytes, allowWeak: Bool) -> CLIError? {
        guard characters(secret) < minimum && !allowWeak else { return nil }
        return CLIError(message: "the password must have at least \(minimum) characters",
                        hints: ["a few unrelated words make a long password that is easy to type"])
    }

    /// The warning an accepted but weak password gets, said once it is chosen.
    static func warn(_ secret: SecretBytes, terminal: Terminal) {
        if secret.withUnsafeBytes(isCommon) {
            terminal.warning("that password is one of the most common ones; anyone guessing tries it first")
        } else if characters(secret) < recommended {
            terminal.warning("a password under \(recommended) characters can be guessed by a determined attacker",
                             hints: ["'vault passwd' changes it"])
        }
    }

    /// UTF-8 characters: every byte that does not continue a sequence.
    private static func characters(_ secret: SecretBytes) -> Int {
        secret.withUnsafeBytes { bytes in bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }
    }

    /// Whether `bytes`, lower-cased, is on the list. Compared without
    /// making a String of the secret, and without an early exit on length.
    static func isCommon(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var found = false
        for word in common where word.utf8.count == bytes.count {
            var difference: UInt8 = 0
            for (a, b) in zip(bytes, word.utf8) {
                let lower = (a >= 0x41 && a <= 0x5A) ? a | 0x20 : a
                difference |= lower ^ b
            }
            found = found || difference == 0
        }
        return found
    }

    /// The most common passwords of at least 8 characters in public breach
    /// corpora (the top of the lists everyone publishes), lower case.
    /// Shorter ones are refused by length anyway.
    static let common: [String] = [
        "password", "password1", "password12", "password123", "passw0rd", "p@ssw0rd", "p@ssword",
        "12345678", "123456789", "1234567890", "0123456789", "11111111", "00000000", "12341234",
        "87654321", "88888888", "11223344", "12344321", "123123123", "987654321", "1q2w3e4r",
        "1q2w3e4r5t", "1qaz2wsx", "qwertyui", "qwertyuiop", "qwerty123", "qwerty12", "asdfghjk",
        "asdfghjkl", "zxcvbnm1", "iloveyou", "iloveyou1", "sunshine", "princess", "football",
        "baseball", "superman", "starwars", "trustno1", "whatever", "computer", "michelle",
        "jennifer", "corvette", "mercedes", "internet", "letmein1", "welcome1", "welcome123",
        "changeme", "abcd1234", "abc12345", "abcdefgh", "aa123456", "a1b2c3d4", "admin123",
        "administrator", "secret123", "monkey123", "dragon123", "master123", "shadow123",
        "football1", "baseball1", "charlie1", "jessica1", "michael1", "liverpool", "chelsea1",
        "samsung1", "pokemon1", "zaq12wsx", "q1w2e3r4", "q1w2e3r4t5", "passwort", "motdepasse",
        "contraseña", "correcthorsebatterystaple", "correct horse battery staple",
    ]
}

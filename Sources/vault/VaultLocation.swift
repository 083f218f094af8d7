/// Where the vault directory is, first that applies: `--vault DIR`,
/// `$VAULT_DIR`, `$XDG_DATA_HOME/vault`, `~/.local/share/vault`.
/// Only the path is decided here; whether a vault is there is VaultCore's.
enum VaultLocation {
    static func resolve(option: String?, environment: [String: String]) throws(CLIError) -> String {
        if let dir = option { return dir }  // the parser refuses an empty value
        if let dir = environment.nonEmpty("VAULT_DIR") { return dir }
        // The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
        if let data = environment.nonEmpty("XDG_DATA_HOME"), data.hasPrefix("/") {
            return data + "/vault"
        }
        guard let home = environment.nonEmpty("HOME") else {
            throw CLIError(message: "cannot tell where the vault is: HOME is not set",
                           hints: ["use --vault DIR, or set VAULT_DIR"], code: .usage)
        }
        return home + "/.local/share/vault"
    }
}

extension Dictionary where Key == String, Value == String {
    /// An environment variable, treating set-but-empty as unset (as most
    /// shells' `${VAR:-default}` does).
    func nonEmpty(_ name: String) -> String? {
        guard let value = self[name], !value.isEmpty else { return nil }
        return value
    }
}

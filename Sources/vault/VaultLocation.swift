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

extension VaultLocation {
    /// This user's vault state on this machine (what manifests it has seen,
    /// plaintext outputs in progress): `$XDG_STATE_HOME/vault`, else
    /// `~/.local/state/vault`. Not inside any vault: a copy of the vault must
    /// not carry it.
    static func stateDirectory(environment: [String: String]) throws(CLIError) -> String {
        if let state = environment.nonEmpty("XDG_STATE_HOME"), state.hasPrefix("/") { return state + "/vault" }
        guard let home = environment.nonEmpty("HOME") else {
            throw CLIError(message: "cannot tell where to keep vault's state: HOME is not set",
                           hints: ["set HOME, or XDG_STATE_HOME"], code: .usage)
        }
        return home + "/.local/state/vault"
    }

    /// This user's configuration home: `$XDG_CONFIG_HOME` (absolute only,
    /// as the spec says), else `~/.config`; nil without HOME. The config
    /// file (`vault run`) and systemd's user units (`vault schedule`) live
    /// under it.
    static func configHome(_ environment: [String: String]) -> String? {
        if let c = environment.nonEmpty("XDG_CONFIG_HOME"), c.hasPrefix("/") { return c }
        return environment.nonEmpty("HOME").map { $0 + "/.config" }
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

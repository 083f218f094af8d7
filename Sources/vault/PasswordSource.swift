import System
import Foundation  // precomposedStringWithCanonicalMapping
import VaultCrypto

/// Where the password comes from, first that applies: `--password-file`,
/// `--password-command`, `$VAULT_PASSWORD_FILE`, `$VAULT_PASSWORD_COMMAND`,
/// a prompt on the terminal. Never the command line: argv is visible to
/// every user of the machine in /proc.
///
/// Bytes are read into a fixed-size [UInt8] that is never grown (growing
/// would leave an unzeroed copy in freed memory), copied into `SecretBytes`,
/// and the array is zeroed. No password passes through String, except the
/// non-ASCII case of `secret(from:count:)`.
struct PasswordSource {
    enum Origin {
        case file(String)
        /// Run with /bin/sh -c; its standard output is the password.
        case command(String)
        case terminal(TTY)
        /// `--key-file`: not a password; `Context.unlock` opens a key-file slot with it.
        case keyFile(String)
        /// No source, but this vault's unlock agent runs: `Context.open`
        /// asks it, and if it cannot serve, the error is the one there
        /// would have been without it.
        case agentOnly(CLIError)
        /// Already read (`Context.readEarly`).
        case read(SecretBytes)
    }

    /// The key file to unlock with, when the global `--key-file` was given.
    var keyFilePath: String? { if case .keyFile(let path) = origin { path } else { nil } }

    let origin: Origin
    let terminal: Terminal
    /// Given on this command line (--password-file, --password-command,
    /// --key-file, or a --slot to try): then it, not the unlock agent, opens
    /// the vault.
    var explicit = false
    /// What the terminal prompt says ("current password: " where a new one
    /// follows, as in passwd).
    var prompt = "password: "

    /// Typed at the terminal (so it can be asked for again).
    var isTerminal: Bool { if case .terminal = origin { true } else { false } }

    /// The longest password accepted, in bytes, from any source.
    static let maximumLength = 4096

    static func resolve(globals: GlobalOptions, environment: [String: String],
                        terminal: Terminal) throws(CLIError) -> PasswordSource {
        let origin: Origin
        let explicit = globals.keyFile != nil || globals.passwordFile != nil || globals.passwordCommand != nil || globals.slot != nil
        if let path = globals.keyFile {
            origin = .keyFile(path)
        } else if let path = globals.passwordFile {
            origin = .file(path)
        } else if let command = globals.passwordCommand {
            origin = .command(command)
        } else if let path = environment.nonEmpty("VAULT_PASSWORD_FILE") {
            origin = .file(path)
        } else if let command = environment.nonEmpty("VAULT_PASSWORD_COMMAND") {
            origin = .command(command)
        } else if let tty = TTY.open() {
            origin = .terminal(tty)
        } else {
            throw CLIError(message: "no password source: no terminal, and no --password-file or --password-command",
                           hints: ["give --password-file FILE or --password-command CMD, or set VAULT_PASSWORD_FILE"],
                           code: .usage)
        }
        return PasswordSource(origin: origin, terminal: terminal, explicit: explicit)
    }

    /// This source, unless it is only the unlock agent (no source given, an
    /// agent running) and `command` ("move send", "passwd") does not take
    /// the agent's key: then a usage error (exit 2) naming it, before any
    /// prompt or I/O. `keyFile`: whether the command takes --key-file.
    func refusingAgent(_ command: String, keyFile: Bool = true) throws(CLIError) -> PasswordSource {
        guard case .agentOnly = origin else { return self }
        throw Self.agentRefused(command, keyFile: keyFile)
    }

    static func agentRefused(_ command: String, keyFile: Bool = true) -> CLIError {
        let sources = keyFile ? "--password-file FILE, --password-command CMD or --key-file FILE"
            : "--password-file FILE or --password-command CMD"
        return CLIError(message: "\(command) needs the password: the unlock agent's key is not accepted for it",
                        hints: ["give \(sources), or run it on a terminal"], code: .usage)
    }

    /// Reads the password; `prompt` (else this source's) is used only on
    /// the terminal.
    func read(prompt: String? = nil) throws(CLIError) -> SecretBytes {
        let prompt = prompt ?? self.prompt
        switch origin {
        case .file(let path): return try readFile(path)
        case .command(let command): return try readCommand(command)
        case .agentOnly(let error):
            throw error
        case .read(let secret):
            return secret
        case .keyFile:
            throw CLIError(message: "this needs the password: --key-file cannot be used here",
                           hints: ["give the password (--password-file, --password-command or the terminal)"], code: .usage)
        case .terminal(let tty):
            var buffer = [UInt8](repeating: 0, count: Self.maximumLength + 1)
            defer { SecureZero.zero(&buffer) }
            let count = try terminal.readSecret(prompt: prompt, from: tty, into: &buffer)
            guard count > 0 else { throw CLIError(message: "empty password") }
            return try Self.secret(from: &buffer, count: count)
        }
    }

    private func readFile(_ path: String) throws(CLIError) -> SecretBytes {
        // Room for the longest password, a CRLF, and one byte to detect more.
        var buffer = [UInt8](repeating: 0, count: Self.maximumLength + 3)
        defer { SecureZero.zero(&buffer) }
        let read: Int
        do {
            let fd = try Syscall.open(path)
            defer { Syscall.close(fd) }
            let status = try Syscall.status(fd, path: path)
            if status.isRegular, status.permissions & 0o044 != 0 {
                terminal.warning("password file '\(path)' can be read by other users", hints: ["chmod 600 '\(path)'"])
            }
            read = try Syscall.readFully(fd, into: &buffer, path: path)
        } catch {
            throw CLIError(message: "cannot read password file '\(path)': \(error.systemReason)")
        }
        let count = Self.withoutLineEnd(buffer, read)
        guard read < buffer.count, count <= Self.maximumLength else {
            throw CLIError(message: "password file '\(path)' is longer than \(Self.maximumLength) bytes")
        }
        guard count > 0 else { throw CLIError(message: "password file '\(path)' is empty") }
        return try Self.secret(from: &buffer, count: count)
    }

    private func readCommand(_ command: String) throws(CLIError) -> SecretBytes {
        var buffer = [UInt8](repeating: 0, count: Self.maximumLength + 3)
        defer { SecureZero.zero(&buffer) }
        let read: Int
        let termination: Termination
        do {
            let child = try Syscall.spawnShell(command)
            // If we are interrupted (SIGTERM reaches only us, unlike Ctrl-C),
            // the command, which may be waiting on a pinentry, goes too.
            let pid = child.pid
            let cleanup = Interrupts.register { Syscall.terminate(pid) }
            defer { Interrupts.unregister(cleanup) }
            // Closing our end before waiting: a command that prints too much
            // gets EPIPE instead of blocking forever on a full pipe.
            let output = Result { try buffer.withUnsafeMutableBytes { try Syscall.readOutput(of: child.pid, from: child.output, into: $0) } }
            Syscall.close(child.output)
            let (count, ended) = try output.get()
            if let ended { termination = ended } else { termination = try Syscall.wait(child.pid) }
            read = count
        } catch {
            throw CLIError(message: "cannot run the password command: \(error.systemReason)")
        }
        // Too much output first: we closed the pipe on it, so its exit status
        // (SIGPIPE) is our doing and says nothing.
        let count = Self.withoutLineEnd(buffer, read)
        guard read < buffer.count, count <= Self.maximumLength else {
            throw CLIError(message: "password command printed more than \(Self.maximumLength) bytes")
        }
        switch termination {
        case .exited(0): break
        case .exited(let status): throw CLIError(message: "password command failed with exit status \(status)")
        // Ctrl-C reaches the whole foreground group: the command may die of it
        // before our own interrupt handler has run. Give the handler a moment
        // to finish (it ends the process, printing once); if the signal was
        // the command's alone, end the same way ourselves: it was meant to stop.
        case .signaled(let signal) where Syscall.interruptSignals.contains(signal):
            usleep(500_000)
            Terminal.writeStderr(["\(Terminal.program): interrupted"])
            Syscall.dieBySignal(signal)
        case .signaled(let signal): throw CLIError(message: "password command was killed by signal \(signal)")
        }
        guard count > 0 else { throw CLIError(message: "password command printed no password") }
        return try Self.secret(from: &buffer, count: count)
    }

    /// `count` less one trailing "\n" or "\r\n": the line end that `echo`
    /// and editors add is not part of the password; any other is.
    static func withoutLineEnd(_ bytes: [UInt8], _ count: Int) -> Int {
        guard count > 0, bytes[count - 1] == UInt8(ascii: "\n") else { return count }
        return count >= 2 && bytes[count - 2] == UInt8(ascii: "\r") ? count - 2 : count - 1
    }

    /// `buffer[..<count]` in guarded memory, NFC-normalised; all of `buffer`
    /// is zeroed.
    ///
    /// Why NFC: "é" can be typed as one code point or as "e" plus a combining
    /// accent, depending on keyboard, input method and OS; Argon2id sees bytes,
    /// so the same password must become the same bytes everywhere.
    ///
    /// The trade-off: ASCII is already in NFC and is copied straight across.
    /// Anything else has to pass through String to be normalised, and String
    /// storage cannot be zeroed, so copies of a non-ASCII password may remain
    /// in freed heap memory until reused. Core dumps and ptrace are off
    /// (`ProcessHardening`), which limits who could read them. Bytes that are
    /// not UTF-8 (a Latin-1 file) have no text to normalise and are used as is.
    static func secret(from buffer: inout [UInt8], count: Int) throws(CLIError) -> SecretBytes {
        defer { SecureZero.zero(&buffer) }
        do {
            if !buffer[..<count].allSatisfy({ $0 < 0x80 }), let text = String(validating: buffer[..<count], as: UTF8.self) {
                var normalised = Array(text.precomposedStringWithCanonicalMapping.utf8)
                return try SecretBytes(consuming: &normalised)
            }
            return try buffer.withUnsafeBytes { try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        } catch {
            throw ErrorReport.cliError(for: error, vaultDirectory: nil)
        }
    }
}

/// A new password (init, passwd): read once from a file or a command, or
/// asked twice on the terminal so a typo does not lock the user out.
struct NewPasswordSource {
    private let source: PasswordSource
    /// `--allow-weak-password`: a vault password under 8 characters is accepted.
    private let allowWeak: Bool

    /// The given source; a terminal one is asked twice.
    init(replacing source: PasswordSource, allowWeak: Bool = false) { (self.source, self.allowWeak) = (source, allowWeak) }

    /// passwd: `--new-password-file FILE`, else the terminal.
    static func resolve(file: String?, terminal: Terminal, allowWeak: Bool = false) throws(CLIError) -> NewPasswordSource {
        if let file {
            return NewPasswordSource(replacing: PasswordSource(origin: .file(file), terminal: terminal), allowWeak: allowWeak)
        }
        guard let tty = TTY.open() else {
            throw CLIError(message: "no terminal to ask for the new password", hints: ["use --new-password-file FILE"],
                           code: .usage)
        }
        return NewPasswordSource(replacing: PasswordSource(origin: .terminal(tty), terminal: terminal), allowWeak: allowWeak)
    }

    /// The same source, asked once (a secret being entered, not chosen).
    var single: PasswordSource { source }

    /// `what` names the secret in the two prompts ("new password").
    /// On the terminal, a pair that does not match or a password the rule
    /// refuses is said and asked for again (three rounds), rather than
    /// ending the command after the user typed it twice.
    func read(what: String = "new password") throws(CLIError) -> SecretBytes {
        guard case .terminal = source.origin else {
            let secret = try source.read()
            if let refusal = strengthRefusal(secret, what) { throw refusal }
            warnIfWeak(secret, what)
            return secret
        }
        let rounds = 3
        for round in 1...rounds {
            // Reading errors (end of input, Ctrl-C, an empty line) end the
            // command as at any prompt; only the choice is asked again.
            let first = try source.read(prompt: "\(what): ")
            let refusal: CLIError
            if let refused = strengthRefusal(first, what) {
                refusal = refused
            } else {
                let second = try source.read(prompt: "repeat \(what): ")
                if first == second {
                    warnIfWeak(first, what)
                    return first
                }
                refusal = CLIError(message: what == "new password" ? "the passwords do not match" : "the \(what)s do not match")
            }
            guard round < rounds else { throw refusal }
            source.terminal.report(CLIError(message: refusal.message + "; try again", hints: refusal.hints))
        }
        throw CLIError(message: "no \(what) chosen")  // not reached: the last round throws
    }

    // The kit passphrase has its own rule (KitCommand); this is the vault password's.
    private func strengthRefusal(_ secret: SecretBytes, _ what: String) -> CLIError? {
        what == "new password" ? PasswordStrength.refusal(secret, allowWeak: allowWeak) : nil
    }

    private func warnIfWeak(_ secret: SecretBytes, _ what: String) {
        if what == "new password" { PasswordStrength.warn(secret, terminal: source.terminal) }
    }
}

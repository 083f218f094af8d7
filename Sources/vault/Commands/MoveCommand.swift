import Foundation
import System
import VaultAgent
import VaultCore
import VaultCrypto
import VaultMove

/// `vault move receive` / `vault move send`: the whole vault to another
/// machine over TCP, then erased here.
struct MoveCommand: Command {
    static let name = "move"
    static let abstract = "move the vault to another machine over the network"
    static let intoOption = ValueOption<String>.text("--into", as: "DIR")
    static let listenOption = ValueOption<String>.text("--listen", as: "ADDR:PORT")
    static let codeFileOption = ValueOption<String>.text("--code-file", as: "FILE")
    static let noVerifyFlag = FlagOption("--no-verify"), keepFlag = FlagOption("--keep"), yesFlag = FlagOption("--yes", "-y")
    static let wordsFlag = FlagOption("--words")
    static let options = [intoOption.spec, listenOption.spec, codeFileOption.spec, noVerifyFlag.spec, keepFlag.spec, yesFlag.spec,
                          wordsFlag.spec]
    static let help = """
        Usage: vault move receive [--into DIR] [--listen ADDR:PORT] [--code-file FILE] [--words] [--no-verify]
               vault move send [--code-file FILE] [--keep] [--yes]

        Moves the whole vault (every item, waiting drop-ins included) to
        another machine on the local network, encrypted end to end, then
        erases it here.

        On the new machine, 'receive' listens and shows a move code (text and
        a QR code). The code holds the addresses to reach it, the hash of a
        one-time key (hybrid: X-Wing, ML-KEM-768 + X25519) and a token:
        treat it as a secret. With --words the code is short, for typing:
        the address, a number and three words ('192.168.1.20
        41237-guitar-orbit-velvet', 33 bits), checked by a password-
        authenticated exchange (CPace) with the X-Wing exchange inside it.
        It allows one attempt: after a sender with a wrong code, the
        receiver stops and a new code is needed (exit 17 on both sides). On
        the old machine, 'send' asks for the code (or reads --code-file),
        connects and proves it. Both ends show the same 6-digit security
        code; on a terminal the sender asks whether the receiver shows it
        too, and goes on only on "y" (--yes skips the question; with no
        terminal it is not asked). Then it asks for the vault password (or
        --key-file; never the unlock agent's key, since the vault is erased
        here), checks every byte of the vault, and sends. A mistyped code
        names the group of four to check; on a terminal that group alone is
        asked again. On the receiver, a mistyped password is asked again.

        The receiver writes into a staging directory, checks every file's
        hash, opens the vault with its password and checks it (skip with
        --no-verify), and only then moves it into place and confirms. Only
        after that confirmation does the sender erase its vault, with what
        this machine kept of it that does not move: its remotes ('vault
        remote add' them again on the new machine) and its backup cache. Anything
        failing before leaves the old vault as it was and nothing at the
        target. The receiver stops after one move, or after 3 connections
        that did not hold the code.

        Options:
          --into DIR           receive: where the vault goes (default: the vault
                               location)
          --listen ADDR:PORT   receive: where to listen (default: every address,
                               a free port)
          --code-file FILE     receive: also write the code to FILE (0600);
                               send: read the code from FILE
          --words              receive: show a short code to type (one attempt) instead
                               of the long code and QR code
          --no-verify          receive: do not unlock and check the received vault
          --keep               send: keep the vault here after the move
          -y, --yes            send: do not ask to compare the security code

        Examples:
          vault move receive
          vault move receive --into ~/vault --listen 192.168.1.20:7450
          vault move receive --words
          vault move send
          vault move send --code-file code.txt --keep
        """

    enum Action { case receive, send }

    let action: Action
    let into: String?
    let listen: (address: MoveAddress?, port: UInt16)?
    let codeFile: String?
    let verify: Bool
    let keep: Bool
    /// send: do not ask to compare the security code.
    let yes: Bool
    /// receive: a short code (MoveShortCode) instead of the long one.
    let shortCode: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = try arguments.exactly("receive|send")
        into = try arguments.value(Self.intoOption)
        codeFile = try arguments.value(Self.codeFileOption)
        verify = !arguments.isSet(Self.noVerifyFlag)
        keep = arguments.isSet(Self.keepFlag)
        yes = arguments.isSet(Self.yesFlag)
        shortCode = arguments.isSet(Self.wordsFlag)
        switch words[0] {
        case "receive":
            guard !keep, !yes else { throw arguments.usageError("--keep and --yes are for move send") }
            action = .receive
            listen = try arguments.value(Self.listenOption).map { text throws(CLIError) in
                guard let parsed = Self.parseListen(text) else {
                    throw arguments.usageError("--listen takes ADDR:PORT (e.g. 0.0.0.0:7450 or [::1]:7450), not '\(text)'")
                }
                return parsed
            }
        case "send":
            guard into == nil, try arguments.value(Self.listenOption) == nil, verify, !shortCode else {
                throw arguments.usageError("--into, --listen, --words and --no-verify are for move receive")
            }
            action = .send
            listen = nil
        default:
            throw arguments.usageError("unknown move action '\(words[0])': use receive or send")
        }
    }

    /// `1.2.3.4:P`, `[v6]:P`, `:P` or `*:P`; the wildcard addresses mean
    /// every interface (nil). PORT 0 means a free port.
    static func parseListen(_ text: String) -> (address: MoveAddress?, port: UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty || host == "*" || host == "0.0.0.0" || host == "::" { return (nil, port) }
        guard let address = MoveAddress(host) else { return nil }
        return (address, port)
    }

    func run(_ context: Context) throws -> ExitCode {
        switch action {
        case .receive:
            return try receive(context)
        case .send:
            // The receiver gets a whole vault: every blob must be here.
            try context.requireFullVault("move send")
            // Sending erases the vault here: whoever sits at a terminal
            // left unlocked must not be able to send it away on the
            // agent's key (docs/SECURITY.md, "Unlock agent").
            return try send(context, password: context.passwordSource().refusingAgent("move send"))
        }
    }
}

// The work of `vault move`, over VaultMove's MoveSender, MoveReceiver and
// MoveChannel. The order of what each side does is the
// safety argument (docs/FORMAT.md, "Device move"):
//
//   sender:   code -> connect -> handshake -> password -> check --read-data
//             -> send everything -> receipt matches -> erase -> done
//   receiver: refuse an occupied target -> listen, show code -> handshake
//             -> staging + hashes + fsync -> unlock and check -> rename into
//             place -> receipt -> done
//
// The sender erases only after the receipt, which the receiver sends only
// once the vault is durable in place: at every instant at least one
// complete copy exists.
extension MoveCommand {
    private func receive(_ context: Context) throws -> ExitCode {
        let terminal = context.terminal
        let receiver: MoveReceiver
        do { receiver = try MoveReceiver(target: into ?? context.vaultDirectory) } catch VaultError.alreadyExists(let path) {
            throw CLIError(message: "'\(path)' already exists and is not empty; a move never overwrites",
                           hints: ["give 'vault move receive --into DIR' a new or empty directory"], code: .exists)
        }
        // With no way to get the password for the check, fail now, not after the transfer.
        let password = verify ? try context.passwordSource() : nil
        // Ctrl-C or SIGTERM: no half vault stays behind.
        let cleanup = Interrupts.register { receiver.discard() }
        defer { Interrupts.unregister(cleanup) }

        // A fresh X-Wing key pair per receive (its seed in guarded memory):
        // the hybrid handshake, version 2 codes.
        let ownKey = try XWing.PrivateKey()
        let token = SecureRandom.bytes(MoveCode.tokenLength)
        var listener: TCPListener? = try TCPListener(address: listen?.address, port: listen?.port ?? 0)
        let port = listener!.port
        var addresses = listen?.address.map { [$0] } ?? TCPListener.localAddresses()
        if addresses.isEmpty { addresses = [MoveAddress("127.0.0.1")!, MoveAddress("::1")!] }
        let code = try MoveCode(addresses: Array(addresses.prefix(MoveCode.maxAddresses)), port: port,
                                receiverKey: ownKey.publicKey, token: token)
        // A short code names one address; the others are said beside it.
        let short = shortCode ? MoveShortCode(address: addresses[0], port: port) : nil
        let text = short?.text ?? code.text
        if let file = codeFile { try UserFiles.writeNew(Array((text + "\n").utf8), to: file) }
        try terminal.printLine("move code: \(text)")
        if short == nil, terminal.stdoutIsTerminal { try terminal.printLine(code.qrText()) }
        terminal.note("waiting on port \(port) (\(code.addresses.map(\.description).joined(separator: ", "))) for 'vault move send' on the old machine")
        if let short, addresses.count > 1 {
            terminal.note("if the old machine cannot reach \(short.address), type another address of this machine in its place")
        }
        terminal.note(short == nil ? "the code is a secret: show it only to the machine that sends"
                                   : "the code is a secret, good for one attempt: a wrong code typed on the old machine ends this receive")

        let channel = try MoveAccept.sender(on: listener!, ownKey: ownKey, token: token, short: short) { peer, failures in
            terminal.warning("refused a connection from \(peer): it does not hold this move code (\(failures) of \(MoveAccept.maxFailedAttempts))")
        }
        listener = nil  // one move per code: a second sender is refused by the kernel
        let move = channel
        terminal.note("connected to \(move.connection.peer)")
        terminal.note("security code: \(move.sas) (the sender shows the same)")

        var progress: ProgressLine?
        defer { progress?.finish() }
        try receiver.receive(over: move, offered: { files, bytes in
            terminal.note("receiving \(files) files, \(Format.size(bytes))")
            progress = ProgressLine.start(terminal, "receiving", total: bytes)
        }, progress: { progress?.update($0) })
        progress?.finish()
        let received = receiver.summary
        terminal.note("received \(received.files) files, \(Format.size(received.bytes)) in \(Self.seconds(received.seconds)) (\(Self.rate(received)))")
        if let password {
            try Self.verify(receiver, move, password: password, terminal: terminal, rollbackGuard: context.rollbackGuard)
        }
        try receiver.commit()
        terminal.note("the vault is now at '\(receiver.target)'",
                      hint: "backups from here stay incremental after 'vault backup --rebuild-cache --host OLD-HOST' (the old machine's name); its remotes are added again with 'vault remote add'")
        do { try receiver.confirm(over: move) } catch {
            // The vault is complete here; only the sender's erase is lost.
            terminal.warning("the sender did not get the confirmation, so it kept its copy",
                             hints: ["erase the old vault by hand once you have checked this one"])
            return .ok
        }
        switch receiver.summary.outcome {
        case .erased?: terminal.note("the sender erased its copy")
        case .kept?: terminal.note("the sender kept its copy (--keep)")
        case nil: terminal.warning("the sender did not say whether it erased its copy", hints: ["look on the old machine"])
        }
        return .ok
    }

    /// Unlocks the staged vault with the password and checks every byte; a
    /// failure is told to the sender (which then keeps its vault).
    private static func verify(_ receiver: MoveReceiver, _ move: MoveChannel, password: PasswordSource,
                               terminal: Terminal, rollbackGuard: RollbackGuard) throws {
        do {
            let vault = try Vault(at: receiver.staging)
            // A typo on a terminal is asked again (up to 3 prompts), as for
            // every unlock: the move waits, it is not aborted.
            var unlocked: UnlockedVault?
            for attempt in 1...(password.isTerminal ? 3 : 1) {
                let secret = try password.read(prompt: "password of the received vault: ")
                do {
                    unlocked = try vault.unlock(password: Password(secret: secret), forWriting: false, rollbackGuard: rollbackGuard)
                    break
                } catch VaultError.wrongPassword where attempt < (password.isTerminal ? 3 : 1) {
                    terminal.note("wrong password; try again")
                }
            }
            guard let unlocked else { throw VaultError.wrongPassword }
            let items = try Self.checkEveryByte(unlocked, terminal: terminal,
                                           failure: CLIError(message: "the received vault failed its check; it was not kept",
                                                             code: .corrupted))
            terminal.note("opened and checked the received vault (\(items))")
        } catch {
            switch error {
            case VaultError.wrongPassword, VaultError.wrongPasswordDelayed, VaultError.lockedOut, VaultError.slotsNotTried:
                receiver.refuse(.wrongPassword, over: move)
            default:
                receiver.refuse(.checkFailed, over: move)
            }
            throw error
        }
    }

    private func send(_ context: Context, password: PasswordSource) throws -> ExitCode {
        let terminal = context.terminal
        let typed = try Self.readCode(codeFile, terminal: terminal)
        if case .long(let code) = typed, code.handshake == .classic {
            // A version-1 code comes from an older `vault move receive`; it still works.
            terminal.warning("the receiver runs an older vault: this move uses the classic X25519-only handshake, not the hybrid (post-quantum) one")
        }
        let vault = try Vault(at: context.vaultDirectory)
        // The code is proven first (the handshake, then the security code
        // compared), before the password and the check of every byte,
        // which take minutes for a large vault (issue 43, item 9). After
        // the handshake the receiver waits with no timeout.
        let connection: TCPConnection
        let (addresses, port) = switch typed {
        case .long(let code): (code.addresses, code.port)
        case .short(let code): ([code.address], code.port)
        }
        do { connection = try TCPConnection.connect(to: addresses, port: port) } catch let error as SystemError {
            throw CLIError(message: "cannot connect to \(error.path ?? "the receiver"): \(error.reason)",
                           hints: ["is 'vault move receive' still running there, and reachable from here? nothing was sent"])
        }
        let move: MoveChannel
        switch typed {
        case .long(let code):
            move = try MoveChannel.connect(connection, code: code)
        case .short(let code):
            do { move = try MoveChannel.connect(connection, shortCode: code) } catch MoveError.codeMismatch {
                throw CLIError(message: "the receiver did not accept this short code (a wrong word or number, or someone in between); it has stopped, so the code is spent",
                               hints: ["nothing was sent; start 'vault move receive --words' again and type its new code"],
                               code: .moveCodeRefused)
            }
        }
        terminal.note("connected to \(connection.peer)")
        terminal.note("security code: \(move.sas) (the receiver shows the same)")
        // The code already authenticates the receiver; comparing the
        // security code catches a code that was read off the wrong screen.
        // No terminal (a script): as --yes.
        if !yes, terminal.confirm("Does the other machine show \(move.sas)?") == false {
            throw CLIError(message: "the security codes do not match; nothing was sent and the vault stays here",
                           hints: ["start 'vault move receive' again on the other machine and use its new code"])
        }
        let unlocked = try context.open(vault, password, forWriting: true, agent: false)
        let items = try Self.checkEveryByte(unlocked, terminal: terminal,
                                       failure: CLIError(message: "the vault failed its check; nothing was sent",
                                                         hints: ["see 'vault check --read-data'"], code: .corrupted))
        terminal.note("checked \(items)")
        let sender = try MoveSender(vault: unlocked)
        let progress = ProgressLine.start(terminal, "sending", total: sender.totalBytes)
        defer { progress?.finish() }
        // The receiver may take long to check every byte; say so rather
        // than leave a progress line at "0 s left".
        let summary = try sender.send(over: move, keep: keep, progress: progress?.update, allSent: {
            progress?.finish()
            terminal.note("sent everything; waiting for the receiver to check the vault")
        })
        progress?.finish()
        terminal.note("moved \(summary.files) files, \(Format.size(summary.bytes)) in \(Self.seconds(summary.seconds)) (\(Self.rate(summary)))")
        if keep {
            terminal.note("kept the vault here (--keep)")
        } else {
            // And this machine's backup cache of it (the piece key, what it
            // stored): nothing of the vault stays.
            if let base = BackupCommand.cacheBase(context.environment) {
                for failed in Eraser.erase(base + "/" + Hex.encode(vault.header.vaultID)) {
                    terminal.warning("could not erase '\(failed)', this machine's backup cache of the vault")
                }
            }
            terminal.note("erased the vault at '\(context.vaultDirectory)', with this machine's remotes and backup cache of it")
            // Its key has nothing left to open here.
            _ = try? AgentClient.lock(vaultID: vault.header.vaultID, environment: context.environment)
            if !summary.leftBehind.isEmpty {
                terminal.warning("\(Format.count(summary.leftBehind.count, "file")) arrived during the move and stayed in '\(context.vaultDirectory)'",
                                 hints: ["copy the inbox files into the new vault's inbox directory"])
            }
        }
        return .ok
    }

    /// check --read-data with a progress line; each damaged item reported,
    /// then `failure` thrown. Returns what was checked ("3 items, 5 versions").
    private static func checkEveryByte(_ vault: UnlockedVault, terminal: Terminal, failure: CLIError) throws -> String {
        let total = vault.manifest.totalSize
        let progress = ProgressLine.start(terminal, "checking", total: total)
        defer { progress?.finish() }
        let report = try vault.check(readData: true, repair: false, progress: progress?.update)
        progress?.finish()
        for p in report.problems { terminal.report(CLIError(message: "item '\(p.item)': \(ErrorReport.words(for: p.kind))", code: .corrupted)) }
        guard report.problems.isEmpty else { throw failure }
        return Format.items(report.itemsChecked, versions: report.versionsChecked)
    }

    /// A code as typed: the long one (text or QR) or a short one (--words).
    enum TypedCode {
        case long(MoveCode)
        case short(MoveShortCode)
    }

    /// The move code, from FILE or the terminal; never from the command line.
    /// On a terminal, a long code's typo that one group explains is fixed by
    /// typing that group again, and a short code's word that is not on the
    /// list by typing that word again (up to 3 times each), not the whole code.
    static func readCode(_ file: String?, terminal: Terminal) throws -> TypedCode {
        if let file {
            let text = String(decoding: try FileHandleFD.regularFile(file, what: .moveCodeFile).readAll(limit: 4096), as: UTF8.self)
            return try parseCode(text)
        }
        guard var text = try terminal.askLine("move code (from 'vault move receive'): ", limit: 1024) else {
            throw CLIError(message: "no move code: no terminal to ask on", hints: ["give --code-file FILE"], code: .usage)
        }
        for _ in 1...3 {
            if MoveShortCode.looksLikeShortCode(text) {
                guard case .unknownWord(let n, let word)? = Self.shortCodeError(text) else { break }
                terminal.note("word \(n) ('\(word)') is not in the word list: type that word again")
                guard let again = try terminal.askLine("word \(n): ", limit: 64) else { break }
                text = MoveShortCode.replacingWord(n, in: text, with: again)
            } else {
                guard (try? MoveCode(text: text)) == nil, let group = MoveCode.likelyTypo(in: text) else { break }
                terminal.note("group \(group) looks mistyped: type that group again (counting from the left, groups of four)")
                guard let again = try terminal.askLine("group \(group): ", limit: 64) else { break }
                text = MoveCode.replacingGroup(group, in: text, with: again)
            }
        }
        return try parseCode(text)
    }

    private static func shortCodeError(_ text: String) -> MoveShortCode.ParseError? {
        do { _ = try MoveShortCode(text: text); return nil } catch { return error }
    }

    private static func parseCode(_ text: String) throws -> TypedCode {
        if MoveShortCode.looksLikeShortCode(text) {
            do { return .short(try MoveShortCode(text: text)) } catch {
                let why = switch error {
                case .noAddress: "a short code starts with the receiver's address"
                case .badNumber: "no number (1 to 65535) after the address"
                case .wordCount(let n): "a short code has \(MoveShortCode.wordCount) words after the number, not \(n)"
                case .unknownWord(let n, let word): "word \(n) ('\(word)') is not in the word list"
                }
                throw CLIError(message: "that is not a valid move code: \(why)",
                               hints: ["type it as 'vault move receive --words' shows it: address, then number-word-word-word"],
                               code: .corrupted)
            }
        }
        do { return .long(try MoveCode(text: text)) } catch {
            if let group = MoveCode.likelyTypo(in: text) {
                throw CLIError(message: "that is not a valid move code: group \(group) looks mistyped",
                               hints: ["compare group \(group) (counting from the left, groups of four) with the receiving machine's screen"],
                               code: .corrupted)
            }
            throw CLIError(message: "that is not a valid move code (a typo?)",
                           hints: ["copy it again from the receiving machine"], code: .corrupted)
        }
    }

    static func seconds(_ s: Double) -> String { s < 10 ? String(format: "%.2f s", s) : String(format: "%.0f s", s) }

    static func rate(_ summary: MoveSummary) -> String {
        summary.seconds > 0 ? Format.size(UInt64(Double(summary.bytes) / summary.seconds)) + "/s" : "-"
    }
}

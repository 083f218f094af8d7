import VaultCore
import VaultMove

/// `vault move receive` / `vault move send`: the whole vault to another
/// machine over TCP, then erased here.
struct MoveCommand: Command {
    static let name = "move"
    static let abstract = "move the vault to another machine over the network"
    static let options: [OptionSpec] = [
        .value("--into", as: "DIR"), .value("--listen", as: "ADDR:PORT"), .value("--code-file", as: "FILE"),
        .flag("--no-verify"), .flag("--keep"),
    ]
    static let help = """
        Usage: vault move receive [--into DIR] [--listen ADDR:PORT] [--code-file FILE] [--no-verify]
               vault move send [--code-file FILE] [--keep]

        Moves the whole vault (every item, waiting drop-ins included) to
        another machine on the local network, encrypted end to end, then
        erases it here.

        On the new machine, 'receive' listens and shows a move code (text and
        a QR code). The code holds the addresses to reach it, a one-time key
        and token: treat it as a secret. On the old machine, 'send' asks for
        the code (or reads --code-file), the vault password, checks every
        byte of the vault, and sends it. Both ends show the same 6-digit
        security code: compare them.

        The receiver writes into a staging directory, checks every file's
        hash, opens the vault with its password and checks it (skip with
        --no-verify), and only then moves it into place and confirms. Only
        after that confirmation does the sender erase its vault. Anything
        failing before leaves the old vault as it was and nothing at the
        target. The receiver stops after one move, or after 3 connections
        that did not hold the code.

        Options:
          --into DIR           receive: where the vault goes (default: the vault location)
          --listen ADDR:PORT   receive: where to listen (default: every address, a free port)
          --code-file FILE     receive: also write the code to FILE (0600);
                               send: read the code from FILE
          --no-verify          receive: do not unlock and check the received vault
          --keep               send: keep the vault here after the move

        Examples:
          vault move receive
          vault move receive --into ~/vault --listen 192.168.1.20:7450
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

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = try arguments.exactly("receive|send")
        into = arguments.value("--into")
        codeFile = arguments.value("--code-file")
        verify = !arguments.flag("--no-verify")
        keep = arguments.flag("--keep")
        switch words[0] {
        case "receive":
            guard !keep else { throw arguments.usageError("--keep is for move send") }
            action = .receive
            listen = try arguments.value("--listen").map { text throws(CLIError) in
                guard let parsed = Self.parseListen(text) else {
                    throw arguments.usageError("--listen takes ADDR:PORT (e.g. 0.0.0.0:7450 or [::1]:7450), not '\(text)'")
                }
                return parsed
            }
        case "send":
            guard into == nil, arguments.value("--listen") == nil, verify else {
                throw arguments.usageError("--into, --listen and --no-verify are for move receive")
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
            return try MoveWiring.receive(self, context)
        case .send:
            return try MoveWiring.send(self, context, password: context.passwordSource())
        }
    }
}

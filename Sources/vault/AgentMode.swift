import VaultAgent

/// The vault binary run as an unlock agent (`vault unlock` starts it so;
/// VaultAgent's AgentLauncher). Not a command: it takes no words a user
/// would type, and reads its setup, key included, from standard input.
enum AgentMode {
    static let argument = "--run-as-unlock-agent"

    static func run(environment: [String: String]) -> Int32 {
        AgentProcess.run(environment: environment, report: ErrorReport.agentReport(for:)) { server in
            // SIGTERM (and the other interrupt signals): remove the socket and
            // erase the key before the process ends.
            _ = Interrupts.register(server.erase)
        }
    }
}

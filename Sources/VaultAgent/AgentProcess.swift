import System

/// The agent process's whole life, run by the vault binary in its agent
/// mode: read the setup from standard input, listen, report "ready" (or why
/// not) on standard output, let go of both pipes, serve until the end.
public enum AgentProcess {
    /// The report when another agent already serves this vault.
    static let alreadyRunning = "already running"

    /// `started` runs once the socket is in place, before the report: the
    /// caller registers what must happen if the process is signalled.
    /// `report` words why the agent could not start (the vault binary's
    /// terminal module does: this library words nothing); "already
    /// running" is not wording but the marker `AgentLauncher` recognises.
    public static func run(environment: [String: String], report: (any Error) -> String,
                           started: (AgentServer) -> Void) -> Int32 {
        // Run as /proc/self/exe, it would be called "exe": `pgrep vault` should find it.
        Syscall.setProcessName("vault")
        let server: AgentServer
        do {
            server = try AgentServer(setup: AgentSetup.read(from: 0), environment: environment)
        } catch {
            Syscall.writeText(1, (error as? AgentError == .alreadyRunning ? alreadyRunning : report(error)) + "\n")
            return 1
        }
        started(server)
        Syscall.writeText(1, "ready\n")
        Syscall.detachStandardStreams()
        server.serve()
        return 0
    }
}

/// Why the unlock agent could not be started or used. The CLI words them.
public enum AgentError: Error, Equatable, Sendable {
    /// $XDG_RUNTIME_DIR is not set (or not an absolute path): there is no
    /// private per-user directory to put the socket in.
    case noRuntimeDirectory
    /// The agent directory is not ours alone (owner, mode, or not a directory).
    case unsafeDirectory(path: String, reason: String)
    /// An agent for this vault already runs.
    case alreadyRunning
    /// The process at the other end of the socket runs as another user.
    case foreignPeer(user: UInt32)
    /// The agent sent something that is not a valid answer, or nothing.
    case badAnswer
    /// A setup out of range (vault id or key length, a time limit of 0 or
    /// above a week), or, in the agent, one it read that was cut short or
    /// not of version 1.
    case badSetup
    /// The setup could not be written to the agent process's pipe.
    case handOverFailed
    /// The agent process stopped before it listened. The text is its report
    /// (worded by the vault binary's agent mode), empty if it said nothing.
    case startFailed(String)
}

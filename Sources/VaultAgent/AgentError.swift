/// Why the unlock agent could not be started or used. The CLI words them.
public enum AgentError: Error, Equatable, Sendable {
    /// $XDG_RUNTIME_DIR is not set (or not an absolute path): there is no
    /// private per-user directory to put the socket in.
    case noRuntimeDirectory
    /// The agent directory is not ours alone (owner, mode, or not a directory).
    case unsafeDirectory(path: String, problem: AgentDirectoryProblem)
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

/// Why the agent directory is not ours alone (`AgentError.unsafeDirectory`).
public enum AgentDirectoryProblem: Equatable, Sendable {
    /// Something other than a directory is in its place.
    case notADirectory
    /// It belongs to another user (this uid).
    case ownedBy(UInt32)
    /// Group or others may use it (its permission bits).
    case openToOthers(mode: UInt16)
}

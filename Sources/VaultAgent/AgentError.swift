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
    /// The agent process could not be started, or said why it stopped.
    case startFailed(String)
}

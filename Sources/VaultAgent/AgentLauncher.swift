import System

/// Starts the agent as a process of its own: the vault binary run again in
/// its agent mode (re-executed rather than forked, since a fork of a
/// multi-threaded Swift process may inherit locks held by threads that do
/// not exist in the child). It leads a new session, so closing the terminal
/// does not end it, and inherits nothing but a pipe holding the setup (its
/// standard input) and a pipe for its report (its standard output). It
/// writes "ready" once it listens, or why it could not.
public enum AgentLauncher {
    static let ready = Array("ready\n".utf8)

    /// Runs `executable` (as `name` in ps) with `arguments`.
    public static func start(executable: String, name: String, arguments: [String], setup: AgentSetup) throws {
        let input = try Syscall.pipe()
        let output: (read: Int32, write: Int32)
        do { output = try Syscall.pipe() } catch {
            Syscall.close(input.read); Syscall.close(input.write)
            throw error
        }
        defer { Syscall.close(output.read) }
        let devNull = try Syscall.open("/dev/null", .writeOnly)
        defer { Syscall.close(devNull) }
        let pid: Int32
        do {
            defer { Syscall.close(input.read); Syscall.close(output.write) }
            pid = try Syscall.spawn(executable, name: name, arguments: arguments, stdin: input.read, stdout: output.write,
                                    stderr: devNull, newSession: true)
        } catch {
            Syscall.close(input.write)
            throw error
        }
        do {
            defer { Syscall.close(input.write) }
            try setup.write(to: input.write)
        } catch {
            Syscall.terminate(pid)
            _ = try? Syscall.wait(pid)
            throw AgentError.handOverFailed
        }
        let report = try Syscall.readReport(output.read, limit: 512, seconds: 10)
        guard report == ready else {
            // It stopped (or hangs): make sure it is gone, and say why.
            Syscall.terminate(pid)
            _ = try? Syscall.wait(pid)
            let text = String(decoding: report.filter { $0 != 0x0a }, as: UTF8.self)
            throw text == AgentProcess.alreadyRunning ? AgentError.alreadyRunning
                : AgentError.startFailed(text)
        }
    }
}

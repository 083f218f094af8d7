#if canImport(Glibc)
import Glibc
#endif
import System
import VaultCore
import VaultCrypto

/// One `rclone serve http` of a remote target for the length of a command,
/// so that a thin vault's range reads are HTTP requests on one kept
/// connection rather than an rclone start each (tens of milliseconds).
///
/// - It listens on 127.0.0.1 only, on a port the kernel chose (read back
///   from /proc: Syscall.listeningLoopbackPort), read-only, behind basic
///   authentication with a random token of this run, passed in rclone's
///   environment (RCLONE_USER, RCLONE_PASS), never on its argument vector.
///   Another local user who reaches the port without the token gets 401;
///   one who serves the port first gets our token, good for nothing else,
///   and can only send bytes every chunk's tag then refuses.
/// - It dies with us: started under `setpriv --pdeathsig KILL` (util-linux),
///   which checks we are still its parent once the signal is armed, so a
///   vault killed with SIGKILL at any instant leaves no server behind;
///   ended with SIGTERM otherwise.
public final class RcloneServer {
    let pid: Int32
    /// Kept for its scratch directory (the server's log) and its environment.
    let rclone: Rclone
    let http: HTTPRange

    /// How long rclone may take to list and bind before we give up.
    static let startSeconds = 30.0

    public init(rclone: Rclone, target: String) throws {
        self.rclone = rclone
        let token = Hex.encode(SecureRandom.bytes(16))
        let log = rclone.scratch + "/serve-" + Hex.encode(SecureRandom.bytes(4))
        let logFile = try FileHandleFD(creating: log)
        var environment = rclone.environment
        environment["RCLONE_USER"] = "vault"
        environment["RCLONE_PASS"] = token
        let arguments = Self.diesWithParent(getpid(), [rclone.program] + Rclone.commonFlags + rclone.limitFlags
            + ["serve", "http", target, "--addr", "127.0.0.1:0", "--read-only", "--no-modtime", "--vfs-cache-mode", "off",
               // No read-ahead past the range asked for: every request is
               // an exact range read whole, and rclone's 16 MiB buffer made
               // the S3 server send up to that much more each time
               // (SeaweedFS: 1.4-1.75 CPU-s against 1.1-1.2 s for a 600 MiB restore).
               "--buffer-size", "0"])
        do {
            pid = try Syscall.spawn("setpriv", arguments: arguments, stdout: logFile.fd, stderr: logFile.fd, environment: environment)
        } catch let error as SystemError where error.errno == .noSuchFile || error.errno == .permissionDenied {
            throw RemoteError.rcloneMissing(program: "setpriv")
        }
        let started = Syscall.monotonicSeconds()
        var port: UInt16?
        while port == nil {
            if let ended = try Syscall.exitStatus(pid) {
                let said = (try? Rclone.lastError(in: log)) ?? ""   // its log is only for the message
                if case .exited(127) = ended, said.isEmpty { throw RemoteError.rcloneMissing(program: rclone.program) }
                throw RemoteError.rcloneFailed(operation: .read, failure: said.isEmpty ? Self.failure(ended) : .said(said))
            }
            // /proc of our own running child: a failure to read it is the
            // server not yet there (its descriptors appear as it starts).
            port = (try? Syscall.listeningLoopbackPort(of: pid)) ?? nil
            if port == nil {
                guard Syscall.monotonicSeconds() - started < Self.startSeconds else {
                    Self.stop(pid)
                    throw RemoteError.rcloneFailed(operation: .read, failure: .said("rclone serve did not start within \(Int(Self.startSeconds)) s"))
                }
                Syscall.sleep(0.01)
            }
        }
        http = HTTPRange(base: "http://127.0.0.1:\(port!)/", login: "vault:" + token)
    }

    deinit { Self.stop(pid) }

    /// setpriv's arguments to run `command` so that it dies with `parent`:
    /// setpriv arms the parent-death signal, then a shell checks that its
    /// parent is still `parent`, and only then becomes the command. A
    /// parent killed after the spawn but before setpriv's prctl would
    /// otherwise leave a server (orphaned before the signal was armed) that
    /// nothing ends: seen once in the full suite, all four rounds of
    /// ThinVaultTests' kill test then counting it. A missing program exits
    /// 127 with nothing said, as when setpriv ran it directly.
    static func diesWithParent(_ parent: Int32, _ command: [String]) -> [String] {
        let armed = #"[ "$PPID" = "$0" ] || exit 0; command -v "$1" >/dev/null 2>&1 || exit 127; exec "$@""#
        return ["--pdeathsig", "KILL", "--", "/bin/sh", "-c", armed, String(parent)] + command
    }

    static func stop(_ pid: Int32) {
        Syscall.sendSignal(SIGTERM, to: pid)
        _ = try? Syscall.wait(pid)   // reaped for tidiness; how it ended changes nothing
    }

    static func failure(_ t: Termination) -> RcloneFailure {
        switch t {
        case .exited(let code): return .exited(code)
        case .signaled(let signal): return .signaled(signal)
        }
    }
}

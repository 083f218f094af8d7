import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Keys live in mlock'ed memory (SecretBytes); where the kernel refuses the
/// lock (RLIMIT_MEMLOCK) they still work, and the user is told once, at the
/// end of the command.
@Suite struct LockedMemoryTests {
    let v: VaultFixture
    init() throws { v = try VaultFixture() }

    static let warning = ["vault: warning: some keys were held in memory that could not be locked; they may have been swapped to disk",
                          "hint: raise the locked-memory limit ('ulimit -l')"]

    @Test func aFailedLockIsSaidOnceAtTheEnd() throws {
        // No locked memory at all: prlimit for anyone, and for root also
        // without CAP_IPC_LOCK, which would ignore the limit.
        let noLock = (getuid() == 0 ? ["setpriv", "--bounding-set=-ipc_lock"] : []) + ["prlimit", "--memlock=0:0"]
        let r = try CLIHarness.run(noLock + [CLIHarness.binary, "--vault", v.dir, "--password-file", v.passwordFile, "list"],
                                   environment: v.environment(), cwd: v.path, executable: "/usr/bin/env")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(Array(lines.suffix(2)) == Self.warning, "\(r.stderr)")
        #expect(lines.filter { $0 == Self.warning[0] }.count == 1)
        let locked = try v.run(["list"])
        #expect(locked.status == 0 && !locked.stderr.contains("could not be locked"), "\(locked.stderr)")
    }
}

import Foundation
import Glibc
import System
import Testing
@testable import VaultRemote

/// The guard a thin vault's `rclone serve` starts under
/// (`RcloneServer.diesWithParent`): the command runs only if its parent is
/// still the process named once the parent-death signal is armed. A parent
/// killed before that is what left an orphaned server once; here the named
/// parent is simply another process, which is what the shell then sees.
@Suite struct RcloneServerGuardTests {
    @Test func theCommandRunsOnlyUnderTheParentItNames() throws {
        let dir = NSTemporaryDirectory() + "dies-with-parent-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }   // a test's scratch
        func run(parent: Int32, _ command: [String]) throws -> Termination {
            let pid = try Syscall.spawn("setpriv", arguments: RcloneServer.diesWithParent(parent, command), stdout: 2, stderr: 2)
            return try Syscall.wait(pid)
        }
        let mark = dir + "/ran"
        let write = ["/bin/sh", "-c", #"echo ran > "$0""#, mark]

        // The parent named is this process, the spawner: the command runs.
        #expect(try run(parent: getpid(), write) == .exited(0))
        #expect(FileManager.default.fileExists(atPath: mark))
        try FileManager.default.removeItem(atPath: mark)

        // Any other parent (the one named is gone): nothing runs.
        #expect(try run(parent: 1, write) == .exited(0))
        #expect(try run(parent: getpid() + 1, write) == .exited(0))
        #expect(!FileManager.default.fileExists(atPath: mark))

        // A program that is not there: 127 and nothing said, which the
        // server's start reports as rclone not installed.
        #expect(try run(parent: getpid(), [dir + "/no-such-program"]) == .exited(127))
    }
}

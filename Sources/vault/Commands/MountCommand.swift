import Foundation
import System
import VaultCore
import VaultMount

/// `vault mount`: the vault as a read-only file system until unmounted.
struct MountCommand: Command {
    static let name = "mount"
    static let abstract = "browse the vault as a read-only file system (FUSE)"
    static let help = """
        Usage: vault mount DIR

        Shows the vault as a read-only file system at DIR (an empty
        directory) until Ctrl-C, SIGTERM or 'fusermount3 -u DIR', each of
        which unmounts it and ends vault with exit 0. Needs the password
        (asked once) and FUSE 3 (/dev/fuse, fusermount3).

        Each file item is a file with its size, permissions and modification
        time; a folder item is a directory with its files, folders and
        symbolic links (the first look inside reads its whole archive once,
        to index it, and keeps that index in the vault for the next mount);
        every version of an item is under the hidden
        directory .versions/NAME/, one entry per version number. What
        'vault backup' stored is under snapshots/HOST/TIME/ (TIME the
        snapshot's start in UTC, as 2026-12-01T16-05-00Z, with -2, -3 for
        more in one second; HOST/latest links to the newest), each snapshot
        holding its absolute paths, read when first looked into; when the
        vault has snapshots an item named 'snapshots' is only under
        .versions/snapshots/. The mount shows the vault as it was when
        mounted. Reads decrypt only the
        chunks they touch, and the next two when reading forward (a
        compressed item is decompressed forward, and resumes at the zstd
        frame before a read that goes back); nothing but folder indexes
        is written to disk. A damaged chunk is an I/O error
        to the program reading it, never other bytes.

        Examples:
          vault mount ~/vault-view
          cp ~/vault-view/passport.pdf /tmp/
          ls ~/vault-view/.versions/notes.txt/
          ls ~/vault-view/snapshots/$(hostname)/latest/home/
        """

    let directory: String

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        directory = try arguments.exactly("DIR")[0]
    }

    func run(_ context: Context) throws -> ExitCode {
        let target = directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
        // Checked before the password is asked, and again by the kernel.
        guard let status = try Syscall.status(of: target, followLinks: true), status.isDirectory else {
            throw CLIError(message: "'\(directory)' is not a directory", hints: ["create an empty directory to mount on"])
        }
        guard try Syscall.listDirectory(target).isEmpty else {
            throw CLIError(message: "refusing to mount over '\(directory)': it is not empty",
                           hints: ["mount on an empty directory"], code: .exists)
        }
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: false, reads: .cached)
        vault.releaseWriterLock()   // reading only, for as long as it stays mounted
        // Folder index files of items gone since (the mount writes them as it indexes).
        vault.tidyFolderIndexes(now: Syscall.now())
        let mount = FuseMount(vault: vault, at: target)
        // Ctrl-C (or SIGTERM, SIGHUP) is the documented way out: it unmounts,
        // and the command ends as after fusermount3 -u, exit 0. A second one
        // while unmounting interrupts as usual.
        let token = Interrupts.stopWith { mount.unmount() }
        defer { Interrupts.unregister(token) }
        try mount.run {
            context.terminal.note("mounted the vault read-only at '\(directory)'",
                                  hint: "Ctrl-C or 'fusermount3 -u \(directory)' unmounts it")
        }
        context.terminal.note("unmounted '\(directory)'")
        return .ok
    }
}

import Testing

/// `--help`, `--version` and the per-command pages. The top-level page is
/// compared in full: it carries the exit-code table that scripts rely on,
/// and README.md must show the same table.
@Suite struct HelpTests {
    let sandbox: Sandbox
    init() throws { sandbox = try Sandbox() }

    @Test func topLevelHelpIsExactlyThePage() throws {
        for flag in ["--help", "-h"] {
            let r = try sandbox.run([flag])
            #expect(r.status == 0)
            #expect(r.stderr == "")
            #expect(r.stdoutText == Self.topLevelHelp)
        }
    }

    @Test func versionPrintsNameAndVersion() throws {
        let r = try sandbox.run(["--version"])
        #expect(r.status == 0)
        #expect(r.stdoutText == "vault 0.1.0\n")
        #expect(r.stderr == "")
    }

    static let commands = ["init", "add", "list", "info", "get", "restore", "remove", "forget", "rename", "passwd", "check", "open", "rekey", "kit", "move", "mount",
                           "remote", "push", "pull", "clone", "share", "key", "upgrade", "backup", "snapshots", "thin", "run", "schedule", "status"]

    @Test(arguments: commands)
    func everyCommandHasAPageWithExamples(command: String) throws {
        let r = try sandbox.run([command, "--help"])
        #expect(r.status == 0)
        #expect(r.stderr == "")
        let page = r.stdoutText
        #expect(page.hasPrefix("Usage: vault \(command)"))
        #expect(page.contains("\nExamples:\n  vault "))
        #expect(page.hasSuffix("\n\nGlobal options, environment and exit codes: see 'vault --help'.\n"))
        // -h, and --help before the command, show the same page.
        #expect(try sandbox.run([command, "-h"]).stdoutText == page)
        #expect(try sandbox.run(["--help", command]).stdoutText == page)
        // Every option's description starts in one column, and no option
        // line runs past 80 columns (issue 29, item 15: `help key`).
        let options = page.components(separatedBy: "\nOptions:\n").dropFirst().first?.components(separatedBy: "\n\n").first ?? ""
        let columns = Set(options.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("  -"), let gap = line.firstRange(of: /\S  +\S/) else { return nil }
            return line.distance(from: line.startIndex, to: gap.upperBound) - 1
        })
        #expect(columns.count <= 1, "\(command): option descriptions start at columns \(columns.sorted())")
        for line in options.split(separator: "\n") { #expect(line.count <= 80, "\(command): \(line)") }
    }

    @Test func commandPageIsExactlyThePage() throws {
        let r = try sandbox.run(["get", "--help"])
        #expect(r.stdoutText == """
            Usage: vault get NAME [-o FILE] [--version N | --at DATE]
                   vault get FOLDER/PATH [-o FILE] [--version N | --at DATE]

            Decrypts the item NAME to FILE, or to standard output: its current
            version, or an older one. Needs the password. FILE must not exist
            yet: vault never overwrites a file. An item that is not text is not
            written to a terminal unless asked (a name such as '.pdf' or '.jpg'
            is refused before the password is asked for). A folder item is written as
            one pax (tar) archive of its files.

            FOLDER/PATH is one file inside the folder item FOLDER (its version
            chosen as above): found through the folder's index (kept in the
            vault once made; making it is one pass through the archive), then
            only its own bytes are written. An exact item name always wins;
            item names never hold '/'.

            Options:
              -o, --output FILE   write to FILE; '-' is standard output (the default;
                                  give '-o -' to send a binary item to a terminal)
              --version N         version N (see 'vault list --versions NAME')
              --at DATE           the version that was current at DATE, local time:
                                  YYYY-MM-DD (the end of that day), 'YYYY-MM-DD HH:MM[:SS]',
                                  a trailing Z for UTC, or @UNIXSECONDS

            Examples:
              vault get passport.pdf -o ~/Desktop/passport.pdf
              vault get notes.txt | less
              vault get notes.txt --version 2 -o notes-v2.txt
              vault get notes.txt --at 2026-11-01
              vault get Documents -o documents.tar
              vault get Documents/notes/big-log.txt -o big-log.txt

            Global options, environment and exit codes: see 'vault --help'.

            """)
    }

    @Test func helpWinsOverOtherMistakesOnTheLine() throws {
        // `get` without NAME and with an unknown option: still its help page.
        let r = try sandbox.run(["get", "--bogus", "--help"])
        #expect(r.status == 0)
        #expect(r.stdoutText.hasPrefix("Usage: vault get NAME"))
        #expect(r.stderr == "")
    }

    @Test func helpForAnUnknownCommandIsAnError() throws {
        let r = try sandbox.run(["frob", "--help"])
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "vault: unknown command 'frob'\nhint: see 'vault --help'\n")
    }

    static let topLevelHelp = """
        vault 0.1.0: an encrypted vault for your files

        Usage: vault [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]

        Commands:
          init        create a vault (asks for the new password twice)
          add         add files without the password
          list        list the items
          info        show the vault's format and settings (no password)
          get         decrypt an item to a file or to standard output
          restore     write items out under a directory
          remove      remove items
          forget      drop old versions of items
          rename      rename an item
          passwd      change the password (or its Argon2id cost)
          check       verify the vault, optionally every byte of it
          open        edit an item in a private copy, then re-encrypt it
          rekey       new master key and file keys, every item re-encrypted
          kit         export a recovery kit, or recover the vault with one
          move        move the vault to another machine over the network
          mount       browse the vault as a read-only file system (FUSE)
          remote      name the off-site copies of the vault (rclone targets)
          push        copy the vault to its off-site remote (no password)
          pull        bring changes and drop-ins from the off-site remote
          clone       make a vault here from an off-site copy
          share       let other users add items (and nothing else), or stop
          key         list, add or remove key slots (passwords, key files)
          upgrade     move an older vault to the current header (X-Wing drop-ins, key slots)
          unlock      keep the vault unlocked for a while (an agent holds the key)
          lock        end the unlock agent: the password is needed again
          backup      snapshot folders without the password, storing only what changed
          snapshots   list, browse and restore backup snapshots
          thin        keep the blobs on a remote, or bring them back (--off)
          run         run a backup profile of the config file, with its hooks and pings
          schedule    install, list or remove a profile's timer (systemd or cron)
          status      the profiles' last runs and the next, with overdue ones named

        Run 'vault help COMMAND' or 'vault COMMAND --help' for a command's options
        and examples. Also accepted: ls (list), rm (remove), mv (rename), cat (get).

        Global options (before or after the command):
          --vault DIR              the vault directory
          --password-file FILE     read the password from FILE
          --password-command CMD   run CMD with /bin/sh -c; its output is the password
          --key-file FILE          unlock with a key file ('vault key add') instead
          --slot NAME              try the password against this key slot only
          -q, --quiet              print only warnings and errors
          --accept-rollback        open a vault older than one seen before here
          --allow-weak-password    accept a new password under 8 characters
          --limit-upload KIB       send to remotes at most KIB KiB/s (rclone's limiter)
          --limit-download KIB     receive from remotes at most KIB KiB/s
          -h, --help               show this help, or a command's
          -V, --version            print the version

        The password is never taken from the command line. Without a file or
        a command, vault asks on the terminal, with echo off. One trailing
        newline is dropped from a file's or a command's output.

        Environment:
          VAULT_DIR                the vault directory, if --vault is not given
          XDG_DATA_HOME            otherwise the vault is $XDG_DATA_HOME/vault,
                                   or else ~/.local/share/vault
          VAULT_PASSWORD_FILE      like --password-file, if neither option is given
          VAULT_PASSWORD_COMMAND   like --password-command, if none of the above
          VAULT_ALLOW_WEAK_KDF     1 lets 'init' go below 64 MiB or 3 passes
                                   (tests and demos only)
          VAULT_RCLONE             the rclone program for remotes (default: rclone)
          RCLONE_CONFIG            rclone's settings and credentials: read by rclone
                                   itself (so are RCLONE_CONFIG_<NAME>_* variables)
          NO_COLOR                 honoured: vault never writes colour or escapes

        Exit codes:
            0  success
            1  failure not listed below
            2  usage: bad command line, or no way to get the password
            3  partial: some inputs were skipped, the others were done
           10  no vault at that path
           11  vault busy: another process is writing to it
           12  wrong password
           13  locked out: a wrong-password delay is running, try again later
           14  corrupted or tampered data
           15  would overwrite: the target already exists
           16  no such item
           17  move: the other side did not accept the code
           20  remote unreachable, or rclone failed there
          130  interrupted: killed by the signal after cleanup (Ctrl-C 130, SIGTERM 143, SIGHUP 129)
          141  output closed early (a reader such as 'head' stopped); nothing is printed

        Examples:
          vault init
          vault add passport.pdf
          vault list
          vault get passport.pdf -o ~/passport.pdf

        """
}

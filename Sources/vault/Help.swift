/// The help pages. Each command's page is hand-written in its own file; this
/// is the top-level page and the footer they share.
enum Help {
    static var commandList: String {
        let width = Commands.all.map { $0.name.count }.max()! + 3
        return Commands.all.map { type in
            "  " + type.name + String(repeating: " ", count: width - type.name.count) + type.abstract
        }.joined(separator: "\n")
    }

    /// What `vault` alone prints: enough to take the next step.
    static var summary: String {
        """
        vault \(Terminal.version): an encrypted vault for your files

        Usage: vault [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]

        Commands:
        \(commandList)

        Start with 'vault init', then 'vault add FILE'.
        Run 'vault help COMMAND' for a command's page, 'vault --help' for everything.
        """
    }

    static var text: String {
        let commands = commandList
        return """
            vault \(Terminal.version): an encrypted vault for your files

            Usage: vault [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]

            Commands:
            \(commands)

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
            \(ExitCode.table)

            Examples:
              vault init
              vault add passport.pdf
              vault list
              vault get passport.pdf -o ~/passport.pdf
            """
    }

    /// `vault <command> --help`.
    static func page(for command: any Command.Type) -> String {
        command.help + "\n\nGlobal options, environment and exit codes: see 'vault --help'."
    }
}

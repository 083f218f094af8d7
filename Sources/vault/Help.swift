/// The help pages. Each command's page is hand-written in its own file; this
/// is the top-level page and the footer they share.
enum Help {
    static var text: String {
        let width = Commands.all.map { $0.name.count }.max()! + 3
        let commands = Commands.all.map { type in
            "  " + type.name + String(repeating: " ", count: width - type.name.count) + type.abstract
        }.joined(separator: "\n")
        return """
            vault \(Terminal.version): an encrypted vault for your files

            Usage: vault [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]

            Commands:
            \(commands)

            Run 'vault COMMAND --help' for a command's options and examples.

            Global options (before or after the command):
              --vault DIR              the vault directory
              --password-file FILE     read the password from FILE
              --password-command CMD   run CMD with /bin/sh -c; its output is the password
              --key-file FILE          unlock with a key file ('vault key add') instead
              --slot NAME              try the password against this key slot only
              --quiet                  print only warnings and errors
              -h, --help               show this help, or a command's
              --version                print the version

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

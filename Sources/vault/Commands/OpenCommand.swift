/// `vault open`: edit an item in a private scratch copy, save it back if changed.
struct OpenCommand: Command {
    static let name = "open"
    static let abstract = "edit an item in a private copy, then re-encrypt it"
    static let options: [OptionSpec] = [.value("--with", as: "CMD")]
    static let help = """
        Usage: vault open NAME [--with CMD]

        Decrypts a private copy of NAME into a scratch directory only you can
        read (under $XDG_RUNTIME_DIR when it exists, else inside the vault),
        runs CMD on it and waits. If the copy changed, it is encrypted back
        under a new key and replaces the item; then every copy is erased
        (overwritten, then deleted), also when CMD fails or saving fails.

        CMD runs through /bin/sh with the copy's path appended as its last
        argument, as editors are run. Without --with: $VISUAL, then $EDITOR,
        then xdg-open. CMD exiting with a non-zero status means "discard":
        nothing is saved. While CMD runs this process holds the vault's writer
        lock; other writers wait (exit 11), 'vault add' and reads still work.
        If vault is killed, the next vault command erases the copy.

        Options:
          --with CMD   the command to run on the copy

        Examples:
          vault open notes.txt
          vault open budget.ods --with libreoffice
          vault open todo.txt --with 'sed -i s/TODO/DONE/'
        """

    let itemName: String
    let with: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemName = try arguments.exactly("NAME")[0]
        with = arguments.value("--with")
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.open(self, context, password: context.passwordSource())
    }
}

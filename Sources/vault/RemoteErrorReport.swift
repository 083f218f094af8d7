import VaultRemote

extension ErrorReport {
    /// How each remote failure reads, and its exit code.
    static func cliError(for error: RemoteError) -> CLIError {
        switch error {
        case .rcloneFailed(let operation, let failure):
            return CLIError(message: "remote unreachable or refused the \(words(for: operation)): rclone: \(words(for: failure))",
                            hints: ["check the target and rclone's configuration ('rclone lsd TARGET'); the vault here is unchanged"],
                            code: .remote)
        case .rcloneMissing(let program):
            return CLIError(message: "cannot run '\(program)': rclone is not installed",
                            hints: ["install it ('apt-get install rclone'), or point VAULT_RCLONE at it"], code: .remote)
        case .remoteChanged(let remote, let known):
            return CLIError(message: "the remote changed while this push ran (its list of items is generation \(remote), this vault last synced \(known))",
                            hints: ["another machine pushed meanwhile; nothing was deleted there; run 'vault push' again, which merges"], code: .busy)
        case .keysDiffer(let remoteChanged):
            return CLIError(message: "this vault and the remote have different keys: one of them was rekeyed since they were last in step",
                            hints: remoteChanged
                                ? ["nothing was changed; clone the remote into a new directory ('vault clone NAME DIR'), then copy the items you want across with 'vault get' and 'vault add'"]
                                : ["nothing was changed; if this vault was rekeyed, 'vault push' puts it on the remote; if the remote was, clone it into a new directory ('vault clone NAME DIR')"],
                            code: .busy)
        case .remoteRollback(let remote, let known, false):
            return CLIError(message: "the remote's list of items is older than one this vault already had from it (generation \(remote), had \(known)): an older copy was put back there",
                            hints: ["nothing was changed here; 'vault push' makes the remote current again"], code: .corrupted)
        case .remoteRollback(let remote, let known, true):
            return CLIError(message: "the remote's list of items is older than one this vault already had from it (generation \(remote), had \(known)): an older copy was put back there, and changed since",
                            hints: ["nothing was changed here; to merge with it as it is now, 'vault remote remove NAME' and 'vault remote add NAME TARGET' make this vault forget what it had from it, and the next pull merges"],
                            code: .corrupted)
        case .headersDiverged:
            return CLIError(message: "both this vault and the remote changed their key slots or passwords since they were last in step",
                            hints: ["no header or list of items was changed (a push still sent its waiting drop-ins); if this vault's key slots are the ones to keep, 'vault push --replace-header' puts them on the remote, and other machines take them at their next pull"],
                            code: .busy)
        case .remoteChangedWhileReading(let announced, let found):
            return CLIError(message: "remote \(tampered): its list of items announced generation \(announced) but is generation \(found)",
                            hints: ["nothing was changed here; the remote changed while it was read, or lies: pull again"], code: .corrupted)
        case .noRemoteVault(let target):
            return CLIError(message: "no vault at remote '\(target)'", hints: ["push to it first, or check the target"], code: .noVault)
        case .otherVault(let target):
            return CLIError(message: "remote '\(target)' holds another vault", hints: ["nothing was changed; choose another target"])
        case .fingerprintMismatch(let expected, let found, true):
            return CLIError(message: "the remote vault's public key fingerprint is \(found), not \(expected)",
                            hints: ["nothing was sent; a typo in --fingerprint is likelier than an attack, but the remote's header may also have been replaced",
                                    "compare with 'vault info' on the owner's machine"], code: .corrupted)
        case .fingerprintMismatch(let expected, let found, false):
            return CLIError(message: "the remote vault's public key fingerprint is \(found), not \(expected) as at this machine's first send there: its header was replaced",
                            hints: ["nothing was sent; if the owner made a new vault there, check its fingerprint with 'vault info' and give it with --fingerprint"],
                            code: .corrupted)
        case .noSuchRemote(let name) where name.isEmpty:
            return CLIError(message: "this vault has no remote", hints: ["add one with 'vault remote add NAME TARGET'"])
        case .noSuchRemote(let name):
            return CLIError(message: "no remote named '\(name)'", hints: ["see 'vault remote list'"])
        case .remoteExists(let name):
            return CLIError(message: "a remote named '\(name)' exists already", hints: ["remove it first, or choose another name"],
                            code: .exists)
        case .invalidRemoteName(let name):
            return CLIError(message: "'\(name)' cannot be a remote's name (1-64 of A-Z a-z 0-9 . _ -, not starting with . or -)")
        case .invalidRemoteTarget(let target):
            return CLIError(message: "'\(target)' cannot be a remote target (an rclone path, not starting with '-')")
        case .tooManyRemotes:
            return CLIError(message: "a vault has at most \(RemoteConfig.maxRemotes) remotes")
        case .malformedRemote(let damage):
            return CLIError(message: "remote \(tampered): \(words(for: damage))", code: .corrupted)
        case .rekeyPending:
            return CLIError(message: "a rekey is unfinished", hints: ["any command that unlocks the vault finishes it; then push"])
        }
    }
}

# fish completion for vault: commands, options and file paths. Item names
# are never completed: they are secret, and this script never runs vault.
# Install as vault.fish in ~/.config/fish/completions or
# /usr/share/fish/vendor_completions.d.

# Prints the command and, for kit and move, the action and the number of
# positional arguments before the cursor; nothing when no command has been
# typed yet.
function __vault_parse
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmd
    set -l action
    set -l npos 0
    set -l skip 0
    set -l endopts 0
    for t in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        if test $endopts -eq 0; and test "$t" = --
            set endopts 1
            continue
        end
        if test $endopts -eq 0; and string match -qr -- '^-.' $t
            if contains -- $t --vault --password-file --password-command -o --output --to \
                    --name --with --new-password-file --passphrase-file \
                    --limit-upload --limit-download --kdf-memory --kdf-passes --kdf-lanes --into --listen --code-file --sort \
                    --versions --at --keep-last --keep-daily --keep-weekly --key-file --new-key-file --slot \
                    --config --via --exclude --exclude-file --iexclude --exclude-if-present --exclude-larger-than \
                    --files-from --files-from-verbatim --files-from-raw --stdin-from-command --stdin-filename --tag --host
                set skip 1
            end
            continue
        end
        if test -z "$cmd"
            set cmd $t
        else
            if contains -- "$cmd" kit move key; and test -z "$action"
                set action $t
            end
            set npos (math $npos + 1)
        end
    end
    if test -n "$cmd"
        echo $cmd
        echo "$action"
        echo $npos
    end
end

function __vault_needs_command
    set -l p (__vault_parse)
    test -z "$p[1]"
end

function __vault_using
    set -l p (__vault_parse)
    test -n "$p[1]"; and contains -- $p[1] $argv
end

# __vault_kit ACTION: the command is kit and its action is ACTION ("" = none yet).
function __vault_kit
    set -l p (__vault_parse)
    test "$p[1]" = kit; and test "$p[2]" = "$argv[1]"
end

# __vault_move ACTION: the command is move and its action is ACTION ("" = none yet).
function __vault_move
    set -l p (__vault_parse)
    test "$p[1]" = move; and test "$p[2]" = "$argv[1]"
end

# __vault_key ACTION: the command is key and its action is ACTION ("" = none yet).
function __vault_key
    set -l p (__vault_parse)
    test "$p[1]" = key; and test "$p[2]" = "$argv[1]"
end

function __vault_kit_wants_file
    set -l p (__vault_parse)
    test "$p[1]" = kit; and test "$p[2]" = recover; and test "$p[3]" -eq 1
end

# Directories for an option's value, also in the "--opt=VALUE" form.
function __vault_dirs
    __fish_complete_directories (string replace -r -- '^--[^=]*=' '' (commandline -ct))
end

complete -c vault -f

# Global options, before or after the command.
complete -c vault -l vault -x -a '(__vault_dirs)' -d 'The vault directory'
complete -c vault -l password-file -r -F -d 'Read the password from FILE'
complete -c vault -l password-command -x -d 'Run CMD with /bin/sh -c; its output is the password'
complete -c vault -l key-file -r -F -d 'Unlock with a key file instead of a password'
complete -c vault -l slot -x -d 'Try the password against this key slot only'
complete -c vault -s q -l quiet -d 'Print only warnings and errors'
complete -c vault -l accept-rollback -d 'Open an older manifest than one seen before'
complete -c vault -l allow-weak-password -d 'Accept a new password under 8 characters'
complete -c vault -l limit-upload -x -d 'Send to remotes at most KIB KiB/s'
complete -c vault -l limit-download -x -d 'Receive from remotes at most KIB KiB/s'
complete -c vault -s h -l help -d 'Show this help, or a command\'s'
complete -c vault -s V -l version -d 'Print the version'

# Commands.
complete -c vault -n __vault_needs_command -a init -d 'Create a vault'
complete -c vault -n __vault_needs_command -a add -d 'Add files without the password'
complete -c vault -n __vault_needs_command -a list -d 'List the items'
complete -c vault -n __vault_needs_command -a info -d 'Show the vault\'s format and settings'
complete -c vault -n __vault_needs_command -a get -d 'Decrypt an item to a file or to standard output'
complete -c vault -n __vault_needs_command -a restore -d 'Write items out under a directory'
complete -c vault -n __vault_needs_command -a remove -d 'Remove items'
complete -c vault -n __vault_needs_command -a forget -d 'Drop old versions of items'
complete -c vault -n __vault_needs_command -a rename -d 'Rename an item'
complete -c vault -n __vault_needs_command -a passwd -d 'Change the password'
complete -c vault -n __vault_needs_command -a check -d 'Verify the vault'
complete -c vault -n __vault_needs_command -a open -d 'Edit an item in a private copy, then re-encrypt it'
complete -c vault -n __vault_needs_command -a rekey -d 'New master key and file keys'
complete -c vault -n __vault_needs_command -a kit -d 'Export a recovery kit, or recover the vault with one'
complete -c vault -n __vault_needs_command -a move -d 'Move the vault to another machine over the network'
complete -c vault -n __vault_needs_command -a mount -d 'Browse the vault as a read-only file system (FUSE)'

# mount DIR
complete -c vault -n '__vault_using mount' -x -a '(__fish_complete_directories)'
complete -c vault -n __vault_needs_command -a share -d 'Let other users add items (and nothing else), or stop'
complete -c vault -n __vault_needs_command -a help -d 'Show a command\'s help page'
complete -c vault -n '__vault_using help' -a 'init add list info get restore remove rename passwd check open rekey kit move mount remote push pull clone share forget key upgrade unlock lock backup snapshots thin run schedule status'
complete -c vault -n __vault_needs_command -a key -d 'List, add or remove key slots (passwords, key files)'
complete -c vault -n __vault_needs_command -a upgrade -d 'Move an older vault to the current header'
complete -c vault -n __vault_needs_command -a unlock -d 'Keep the vault unlocked for a while (an agent holds the key)'
complete -c vault -n __vault_needs_command -a lock -d 'End the unlock agent: the password is needed again'
complete -c vault -n __vault_needs_command -a backup -d 'Snapshot folders without the password, storing only what changed'
complete -c vault -n __vault_needs_command -a snapshots -d 'List, browse and restore backup snapshots'

# backup PATH...
complete -c vault -n '__vault_using backup' -F
complete -c vault -n '__vault_using backup' -l exclude -x -d 'Leave out what matches'
complete -c vault -n '__vault_using backup' -l exclude-file -r -F -d 'Patterns from FILE'
complete -c vault -n '__vault_using backup' -l exclude-caches -d 'Leave out folders holding a CACHEDIR.TAG'
complete -c vault -n '__vault_using backup' -l exclude-larger-than -x -d 'Leave out files larger than SIZE'
complete -c vault -n '__vault_using backup' -l one-file-system -d 'Stay on each path\'s file system'
complete -c vault -n '__vault_using backup' -l tag -x -d 'A tag on the snapshot'
complete -c vault -n '__vault_using backup' -l iexclude -x -d 'As --exclude, letters matched in either case'
complete -c vault -n '__vault_using backup' -l exclude-if-present -x -d 'Leave out folders holding an entry called NAME'
complete -c vault -n '__vault_using backup' -l files-from -r -F -d 'More paths, one a line'
complete -c vault -n '__vault_using backup' -l files-from-verbatim -r -F -d 'More paths, one a line, taken as they are'
complete -c vault -n '__vault_using backup' -l files-from-raw -r -F -d 'More paths, separated by NUL bytes'
complete -c vault -n '__vault_using backup' -l stdin-from-command -x -d 'Keep a command\'s output as a file of the snapshot'
complete -c vault -n '__vault_using backup' -l stdin-filename -x -d 'That file\'s name'
complete -c vault -n '__vault_using backup' -l host -x -d 'The host name recorded'
complete -c vault -n '__vault_using backup' -l dry-run -d 'Read and count, store nothing'
complete -c vault -n '__vault_using backup' -l json -d 'One JSON summary on standard output'
complete -c vault -n '__vault_using backup' -l to -x -d 'Straight into the inbox of the remote vault copy at TARGET'
complete -c vault -n '__vault_using backup' -l fingerprint -x -d 'The remote vault\'s public key fingerprint'
complete -c vault -n '__vault_using backup' -l rebuild-cache -d 'Make this machine\'s backup cache again from the vault'

# snapshots [list|ls|restore|dump]
complete -c vault -n '__vault_using snapshots' -x -a 'list ls restore dump find diff stats tag rewrite forget prune'
complete -c vault -n '__vault_using snapshots' -l keep-last -x -d 'forget: keep the N newest'
complete -c vault -n '__vault_using snapshots' -l keep-hourly -x -d 'forget: the newest of each of N hours'
complete -c vault -n '__vault_using snapshots' -l keep-daily -x -d 'forget: the newest of each of N days'
complete -c vault -n '__vault_using snapshots' -l keep-weekly -x -d 'forget: the newest of each of N weeks'
complete -c vault -n '__vault_using snapshots' -l keep-monthly -x -d 'forget: the newest of each of N months'
complete -c vault -n '__vault_using snapshots' -l keep-yearly -x -d 'forget: the newest of each of N years'
complete -c vault -n '__vault_using snapshots' -l keep-within -x -d 'forget: every snapshot within DURATION'
complete -c vault -n '__vault_using snapshots' -s o -l output -r -F -d 'dump: write to FILE'
complete -c vault -n '__vault_using snapshots' -l prune -d 'forget: then delete the packs no snapshot needs'
complete -c vault -n '__vault_using snapshots' -l dry-run -d 'forget, prune: only say what would go'
complete -c vault -n '__vault_using snapshots' -l grace -x -d 'forget --prune, prune: how long a pack must have been unused'
complete -c vault -n '__vault_using snapshots' -l host -x -d 'list: only snapshots of HOST'
complete -c vault -n '__vault_using snapshots' -l tag -x -d 'list: only snapshots with TAG'
complete -c vault -n '__vault_using snapshots' -l json -d 'list: one JSON document on standard output'
complete -c vault -n '__vault_using snapshots' -l to -x -a '(__fish_complete_directories)' -d 'restore: where to write'
complete -c vault -n '__vault_using snapshots' -l include -x -d 'restore: only what matches'
complete -c vault -n '__vault_using snapshots' -l exclude -x -d 'restore: leave out what matches'
complete -c vault -n '__vault_using snapshots' -l exclude-file -r -F -d 'rewrite: patterns from FILE'
complete -c vault -n '__vault_using snapshots' -l keep -d 'rewrite: keep the original snapshots'
complete -c vault -n '__vault_using snapshots' -l repack-unused -d 'prune: rewrite every pack with unused bytes'
complete -c vault -n '__vault_using snapshots' -l archive -x -a 'tar zip' -d 'dump: a folder as one archive'
complete -c vault -n '__vault_using snapshots' -l add -x -d 'tag: add TAG'
complete -c vault -n '__vault_using snapshots' -l remove -x -d 'tag: take TAG away'
complete -c vault -n '__vault_using snapshots' -l set -x -d 'tag: replace the tags with these'
complete -c vault -n '__vault_using snapshots' -l overwrite -x -a 'never if-changed always' -d 'restore: what to do with a file there with other content'

# init
complete -c vault -n '__vault_using init' -l kdf-memory -x -d 'Argon2id memory in MiB'
complete -c vault -n '__vault_using init' -l kdf-passes -x -d 'Argon2id passes'
complete -c vault -n '__vault_using init' -l kdf-lanes -x -d 'Argon2id lanes'
complete -c vault -n '__vault_using init' -l compress -d 'Kept for old scripts: compression is on by default'
complete -c vault -n '__vault_using init' -l shared -d 'Let other users add items, and nothing else'

# share
complete -c vault -n '__vault_using share' -l off -d 'Stop sharing'

# unlock, lock
complete -c vault -n '__vault_using unlock' -l for -x -d 'How long: 90s, 15m, 2h, 1d'
complete -c vault -n '__vault_using unlock' -l idle -d 'Count the time from the last use'
complete -c vault -n '__vault_using unlock' -l status -d 'Say whether the vault is unlocked'
complete -c vault -n '__vault_using lock' -l all -d 'End the unlock agents of every vault'

# add PATH...
complete -c vault -n '__vault_using add' -F
complete -c vault -n '__vault_using add' -l name -x -d 'The item\'s name'
complete -c vault -n '__vault_using add' -l compression -x -a 'auto off max zstd xz' -d 'How to compress (auto: zstd, raw where it does not pay)'
complete -c vault -n '__vault_using add' -l compress -d 'Older spelling (--compress=LEVEL: xz at preset LEVEL)'
complete -c vault -n '__vault_using add' -l no-compress -d 'Store raw'

# list, info, check
complete -c vault -n '__vault_using list info check' -l json -d 'One JSON document on standard output'
complete -c vault -n '__vault_using list' -l sort -x -a 'name size added' -d 'Sort by name, size (largest first) or added'
complete -c vault -n '__vault_using check' -l read-data -d 'Also decrypt and authenticate every chunk'
complete -c vault -n '__vault_using check' -l repair -d 'Remove leftovers, quarantine orphans'
complete -c vault -n '__vault_using check' -l purge -d 'With --repair: delete what is quarantined'
complete -c vault -n '__vault_using check' -l read-data-subset -x -d 'Read only part of the blobs (N% or n/m)'

# get NAME (names are not completed)
complete -c vault -n '__vault_using get' -s o -l output -r -F -d 'Write to FILE'
complete -c vault -n '__vault_using get restore' -l version -x -d 'Version N of the item'
complete -c vault -n '__vault_using get restore' -l at -x -d 'The version current at DATE'

# list --versions NAME
complete -c vault -n '__vault_using list' -l versions -x -d 'Every version of one item'

# remove NAME... [--yes]
complete -c vault -n '__vault_using remove' -l yes -d 'Do not ask'

# forget [NAME...] --keep-last N ...
complete -c vault -n '__vault_using forget' -l keep-last -x -d 'Keep the N newest versions'
complete -c vault -n '__vault_using forget' -l keep-daily -x -d 'Keep the newest of each of the last N days'
complete -c vault -n '__vault_using forget' -l keep-weekly -x -d 'Keep the newest of each of the last N weeks'
complete -c vault -n '__vault_using forget' -l dry-run -d 'Only say what would be dropped'

# restore NAME... --to DIR
complete -c vault -n '__vault_using restore' -l to -x -a '(__vault_dirs)' -d 'Where to write the items'

# remove NAME... [--yes]
complete -c vault -n '__vault_using remove' -s y -l yes -d 'Do not ask before removing a pattern\'s items'

# passwd
complete -c vault -n '__vault_using passwd' -l new-password-file -r -F -d 'Read the new password from FILE'
complete -c vault -n '__vault_using passwd' -l kdf-memory -x -d 'Argon2id memory in MiB'
complete -c vault -n '__vault_using passwd' -l kdf-passes -x -d 'Argon2id passes'
complete -c vault -n '__vault_using passwd' -l recalibrate -d 'A new cost, calibrated on this machine'

# key list|add|remove
complete -c vault -n '__vault_key ""' -a list -d 'Show the key slots (no password)'
complete -c vault -n '__vault_key ""' -a add -d 'Add a password or key-file slot'
complete -c vault -n '__vault_key ""' -a remove -d 'Remove a key slot'
complete -c vault -n '__vault_key list' -l json -d 'One JSON document on standard output'
complete -c vault -n '__vault_key add' -l new-password-file -r -F -d 'The new slot\'s password, from FILE'
complete -c vault -n '__vault_key add' -l new-key-file -r -F -d 'A key-file slot opened by FILE'
complete -c vault -n '__vault_key add' -l generate -d 'Write the key file first (64 random bytes)'
complete -c vault -n '__vault_key add' -l kdf-memory -x -d 'Argon2id memory in MiB'
complete -c vault -n '__vault_key add' -l kdf-passes -x -d 'Argon2id passes'
complete -c vault -n '__vault_key remove' -l yes -d 'Do not ask for confirmation'

# open NAME --with CMD
complete -c vault -n '__vault_using open' -l with -x -d 'The command to run on the copy'

# rekey
complete -c vault -n '__vault_using rekey' -l yes -d 'Do not ask for confirmation'

# kit export|recover
complete -c vault -n '__vault_kit ""' -a export -d 'Export a recovery kit'
complete -c vault -n '__vault_kit ""' -a recover -d 'Recover the vault with a kit'
complete -c vault -n '__vault_kit_wants_file' -F
complete -c vault -n '__vault_kit export; or __vault_kit ""' -s o -l output -r -F -d 'Where to write the kit'
complete -c vault -n '__vault_kit export; or __vault_kit ""' -l html -r -F -d 'Write the kit as a printable HTML page'
complete -c vault -n '__vault_kit export; or __vault_kit ""' -l generate -d 'Make a random kit passphrase'
complete -c vault -n '__vault_kit export; or __vault_kit ""' -l kdf-memory -x -d 'Argon2id memory for the kit'
complete -c vault -n '__vault_kit export; or __vault_kit ""' -l kdf-passes -x -d 'Argon2id passes for the kit'
complete -c vault -n '__vault_using kit' -l passphrase-file -r -F -d 'The kit passphrase, from FILE'
complete -c vault -n '__vault_kit recover; or __vault_kit ""' -l new-password-file -r -F -d 'The new vault password, from FILE'

# move receive|send
complete -c vault -n '__vault_move ""' -a receive -d 'Receive the vault here, on the new machine'
complete -c vault -n '__vault_move ""' -a send -d 'Send the vault, from the old machine'
complete -c vault -n '__vault_move receive; or __vault_move ""' -l into -x -a '(__vault_dirs)' -d 'Where the vault goes'
complete -c vault -n '__vault_move receive; or __vault_move ""' -l listen -x -d 'Where to listen (ADDR:PORT)'
complete -c vault -n '__vault_move receive; or __vault_move ""' -l no-verify -d 'Do not unlock and check the received vault'
complete -c vault -n '__vault_move receive; or __vault_move ""' -l words -d 'Show a short code to type (one attempt)'
complete -c vault -n '__vault_using move' -l code-file -r -F -d 'The move code: written to FILE (receive), read from it (send)'
complete -c vault -n '__vault_move send; or __vault_move ""' -l keep -d 'Keep the vault here after the move'
complete -c vault -n '__vault_move send; or __vault_move ""' -s y -l yes -d 'Do not ask to compare the security code'

# off-site copies: remote add|list|remove, push, pull, clone; add --to, check --remote
complete -c vault -n __vault_needs_command -a remote -d 'Name the off-site copies of the vault'
complete -c vault -n __vault_needs_command -a push -d 'Copy the vault to its off-site remote'
complete -c vault -n __vault_needs_command -a pull -d 'Bring changes and drop-ins from the off-site remote'
complete -c vault -n __vault_needs_command -a clone -d 'Make a vault here from an off-site copy'
complete -c vault -n '__vault_using clone' -l thin -d 'Keep the blobs on the remote'
complete -c vault -n '__vault_using clone thin' -l cache-size -x -d 'The thin vault cache bound'
complete -c vault -n __vault_needs_command -a thin -d 'Keep the blobs on a remote, or bring them back'
complete -c vault -n '__vault_using thin' -l off -d 'Bring every blob back: a full vault again'
complete -c vault -n '__vault_using remote' -a 'add list remove' -d 'Remote action'
complete -c vault -n '__vault_using remote push pull clone' -l json -d 'One JSON summary on standard output'
complete -c vault -n '__vault_using push' -l replace-header -d 'Upload this vault header even if the remote one changed too'
complete -c vault -n '__vault_using add' -l to -x -d 'Drop into the inbox of the remote vault copy at TARGET'
complete -c vault -n '__vault_using add' -l fingerprint -x -d 'The remote vault\'s public key fingerprint'
complete -c vault -n '__vault_using check' -l remote -x -d 'Check the off-site copy at remote NAME'

# run, schedule, status PROFILE (profile names are not completed: the
# config file is not read here)
complete -c vault -n __vault_needs_command -a run -d 'Run a backup profile of the config file'
complete -c vault -n __vault_needs_command -a schedule -d 'Install, list or remove a profile\'s timer'
complete -c vault -n __vault_needs_command -a status -d 'The profiles\' last runs and the next'
complete -c vault -n '__vault_using run schedule status' -l config -r -F -d 'Another config file'
complete -c vault -n '__vault_using run' -l if-due -d 'Only if a time of the schedule has come'
complete -c vault -n '__vault_using schedule' -l via -x -a 'systemd cron' -d 'systemd units or a crontab line'
complete -c vault -n '__vault_using schedule' -l remove -d 'Stop and remove the profile\'s timer'
complete -c vault -n '__vault_using schedule' -l list -d 'The timers installed'
complete -c vault -n '__vault_using status' -l json -d 'One JSON document on standard output'

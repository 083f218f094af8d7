# bash completion for vault                                   -*- shell-script -*-
#
# Completes commands, options, option values and file paths, and remote
# names (read from the vault's `remotes` file, plain text by design). Item
# names are never completed: they are secret, and this script never runs
# vault.
# Install as /usr/share/bash-completion/completions/vault (or source it).

_vault_opts_for() {
    # Prints the options of command $1 (kit or move action $2, if any).
    case $1 in
        init)    echo "--kdf-memory --kdf-passes --kdf-lanes --compress --shared" ;;
        share)   echo "--off" ;;
        unlock)  echo "--for --idle --status" ;;
        lock)    echo "--all" ;;
        backup)  echo "--exclude --exclude-file --iexclude --exclude-if-present --exclude-caches --exclude-larger-than --files-from --files-from-verbatim --files-from-raw --stdin-from-command --stdin-filename --one-file-system --tag --host --dry-run --json --to --fingerprint --rebuild-cache" ;;
        run)     echo "--config --if-due" ;;
        schedule) echo "--config --via --remove --list" ;;
        status)  echo "--config --json" ;;
        snapshots)
            case $2 in
                restore) echo "--to --include --exclude --overwrite" ;;
                forget)  echo "--keep-last --keep-hourly --keep-daily --keep-weekly --keep-monthly --keep-yearly --keep-within --host --tag --prune --grace --dry-run" ;;
                prune)   echo "--grace --dry-run --repack-unused" ;;
                rewrite) echo "--exclude --exclude-file --keep --prune --grace --dry-run" ;;
                dump)    echo "-o --output --archive" ;;
                ls | diff) ;;
                stats)   echo "--json" ;;
                tag)     echo "--add --remove --set" ;;
                *)       echo "--host --tag --json" ;;
            esac ;;
        add)     echo "--name --compression --no-compress --compress --compress= --to --fingerprint" ;;
        list)    echo "--sort --json --versions" ;;
        info)    echo "--json" ;;
        get)     echo "-o --output --version --at" ;;
        restore) echo "--to --version --at" ;;
        remove)  echo "-y --yes" ;;
        forget)  echo "--keep-last --keep-daily --keep-weekly --dry-run" ;;
        passwd)  echo "--new-password-file --kdf-memory --kdf-passes --recalibrate" ;;
        check)   echo "--read-data --read-data-subset --repair --purge --json --remote" ;;
        thin)    echo "--cache-size --off" ;;
        push)    echo "--json --replace-header" ;;
        clone)   echo "--json --thin --cache-size" ;;
        remote | pull) echo "--json" ;;
        open)    echo "--with" ;;
        rekey)   echo "--yes" ;;
        key)
            case $2 in
                list)   echo "--json" ;;
                add)    echo "--new-password-file --new-key-file --generate --kdf-memory --kdf-passes" ;;
                remove) echo "--yes" ;;
                *)      echo "--json --new-password-file --new-key-file --generate --kdf-memory --kdf-passes --yes" ;;
            esac ;;
        kit)
            case $2 in
                export)  echo "-o --output --html --passphrase-file --generate --kdf-memory --kdf-passes" ;;
                recover) echo "--passphrase-file --new-password-file" ;;
                *)       echo "-o --output --html --passphrase-file --generate --kdf-memory --kdf-passes --new-password-file" ;;
            esac ;;
        move)
            case $2 in
                receive) echo "--into --listen --code-file --no-verify --words" ;;
                send)    echo "--code-file --keep -y --yes" ;;
                *)       echo "--into --listen --code-file --no-verify --words --keep -y --yes" ;;
            esac ;;
    esac
}

# How the value of option $1 (of command $2) is completed: dirs, files,
# none, a word list, remotes; or "" when $1 takes no value. Every option
# that takes a value is here, or the walk below would take its value for
# a positional argument.
_vault_value_kind() {
    case $1 in
        --vault | --into) echo dirs ;;
        --to) [[ $2 == add || $2 == backup ]] && echo remotes || echo dirs ;;
        --password-file | --new-password-file | --passphrase-file | -o | --output | --html | --code-file | --key-file | --new-key-file | --exclude-file | --config | --files-from | --files-from-verbatim | --files-from-raw) echo files ;;
        --limit-upload | --limit-download) echo none ;;
        --password-command | --with | --name | --kdf-memory | --kdf-passes | --kdf-lanes | --listen | --fingerprint | --slot) echo none ;;
        --versions | --at | --keep-last | --keep-hourly | --keep-daily | --keep-weekly | --keep-monthly | --keep-yearly | --keep-within) echo none ;;
        --iexclude | --exclude-if-present | --stdin-from-command | --stdin-filename) echo none ;;
        --exclude | --exclude-larger-than | --include | --tag | --host | --grace | --cache-size | --read-data-subset | --for | --add | --remove | --set) echo none ;;
        --version) [[ $2 == get || $2 == restore ]] && echo none ;;
        --remote) echo remotes ;;
        --sort) echo sort ;;
        --compression) echo compression ;;
        --overwrite) echo overwrite ;;
        --via) echo via ;;
        --archive) echo archive ;;
    esac
}

# The remote names of the vault the command line names (--vault, else
# VAULT_DIR, else the default place): the first field of each line of its
# `remotes` file after the first.
_vault_remotes() {
    local dir=${VAULT_DIR:-}
    local i
    for ((i = 1; i < ${#w[@]} - 1; i++)); do
        [[ ${w[i]} == --vault ]] && dir=${w[i + 1]}
        [[ ${w[i]} == --vault=* ]] && dir=${w[i]#--vault=}
    done
    if [[ -z $dir ]]; then
        if [[ ${XDG_DATA_HOME:-} == /* ]]; then dir=$XDG_DATA_HOME/vault; else dir=$HOME/.local/share/vault; fi
    fi
    dir=${dir/#\~/$HOME}
    [[ -r $dir/remotes ]] && awk -F '\t' 'NR > 1 { print $1 }' "$dir/remotes" 2>/dev/null
}

_vault_complete_value() {
    # $1: kind, $2: the partial word.
    case $1 in
        dirs)
            if declare -F _filedir >/dev/null; then
                local cur=$2
                _filedir -d
            else
                compopt -o filenames 2>/dev/null
                local IFS=$'\n'
                COMPREPLY=($(compgen -d -- "$2"))
            fi ;;
        files)
            if declare -F _filedir >/dev/null; then
                local cur=$2
                _filedir
            else
                compopt -o filenames 2>/dev/null
                local IFS=$'\n'
                COMPREPLY=($(compgen -f -- "$2"))
            fi ;;
        sort) COMPREPLY=($(compgen -W "name size added" -- "$2")) ;;
        compression) COMPREPLY=($(compgen -W "auto max off zstd xz" -- "$2")) ;;
        overwrite) COMPREPLY=($(compgen -W "never if-changed always" -- "$2")) ;;
        via) COMPREPLY=($(compgen -W "systemd cron" -- "$2")) ;;
        archive) COMPREPLY=($(compgen -W "tar zip" -- "$2")) ;;
        remotes) COMPREPLY=($(compgen -W "$(_vault_remotes)" -- "$2")) ;;
        *) COMPREPLY=() ;;
    esac
}

_vault() {
    COMPREPLY=()
    # Rejoin "--opt" "=" "value" (bash splits words at '=').
    local -a w=()
    local i=0 n=${#COMP_WORDS[@]} cw=-1 start
    while ((i < n)); do
        local t=${COMP_WORDS[i]}
        start=$i
        if [[ $t == --* && ${COMP_WORDS[i + 1]-} == "=" ]]; then
            t+="="
            ((i += 1))
            if ((i + 1 < n)); then
                ((i += 1))
                t+=${COMP_WORDS[i]}
            fi
        fi
        w+=("$t")
        ((start <= COMP_CWORD && COMP_CWORD <= i)) && cw=$((${#w[@]} - 1))
        ((i += 1))
    done
    if ((cw < 0)); then
        w+=("")
        cw=$((${#w[@]} - 1))
    fi
    local cur=${w[cw]-}

    # Walk the words before the cursor: find the command, the kit or move
    # action, and the positional arguments; skip option values.
    local cmd="" action="" npos=0 endopts=0 kind
    for ((i = 1; i < cw; i++)); do
        local t=${w[i]}
        if ((!endopts)) && [[ $t == -- ]]; then
            endopts=1
        elif ((!endopts)) && [[ $t == -?* ]]; then
            if [[ $t != *=* ]] && [[ -n $(_vault_value_kind "$t" "$cmd") ]]; then
                ((i += 1))
            fi
        elif [[ -z $cmd ]]; then
            cmd=$t
        else
            [[ ($cmd == kit || $cmd == move || $cmd == key || $cmd == snapshots) && -z $action ]] && action=$t
            ((npos += 1))
        fi
    done

    # The value of an option: "--opt VALUE" or "--opt=VALUE".
    if ((!endopts)) && [[ $cur == --*=* ]]; then
        kind=$(_vault_value_kind "${cur%%=*}" "$cmd")
        _vault_complete_value "${kind:-none}" "${cur#*=}"
        return 0
    fi
    local prev=${w[cw - 1]-}
    if ((cw >= 1)) && ((!endopts)) && [[ $prev == -?* && $prev != *=* ]]; then
        kind=$(_vault_value_kind "$prev" "$cmd")
        if [[ -n $kind ]]; then
            _vault_complete_value "$kind" "$cur"
            return 0
        fi
    fi

    if ((!endopts)) && [[ $cur == -* ]]; then
        local opts="--vault --password-file --password-command --key-file --slot -q --quiet --accept-rollback --allow-weak-password --limit-upload --limit-download -h --help -V --version"
        [[ -n $cmd ]] && opts+=" $(_vault_opts_for "$cmd" "$action")"
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
            compopt -o nospace 2>/dev/null
        fi
        return 0
    fi

    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "init add list info get restore remove forget rename passwd check open rekey kit move mount remote push pull clone share key upgrade unlock lock backup snapshots thin run schedule status help" -- "$cur"))
        return 0
    fi
    case $cmd in
        add | backup) _vault_complete_value files "$cur" ;;
        snapshots) [[ -z $action ]] && COMPREPLY=($(compgen -W "list ls restore dump find diff stats tag rewrite forget prune" -- "$cur")) ;;
        help) ((npos == 0)) && COMPREPLY=($(compgen -W "init add list info get restore remove forget rename passwd check open rekey kit move mount remote push pull clone share key upgrade unlock lock backup snapshots thin run schedule status" -- "$cur")) ;;
        mount) ((npos == 0)) && _vault_complete_value dirs "$cur" ;;
        kit)
            if [[ -z $action ]]; then
                COMPREPLY=($(compgen -W "export recover" -- "$cur"))
            elif [[ $action == recover ]] && ((npos == 1)); then
                _vault_complete_value files "$cur"
            fi ;;
        move)
            if [[ -z $action ]]; then
                COMPREPLY=($(compgen -W "receive send" -- "$cur"))
            fi ;;
        remote)
            ((npos == 0)) && COMPREPLY=($(compgen -W "add list remove" -- "$cur"))
            ((npos == 1)) && [[ ${w[cw - 1]} == remove ]] && _vault_complete_value remotes "$cur" ;;
        push | pull | thin)
            ((npos == 0)) && _vault_complete_value remotes "$cur" ;;
        clone)
            ((npos == 0)) && COMPREPLY=($(compgen -W "$(_vault_remotes)" -- "$cur"))
            ((npos == 1)) && _vault_complete_value dirs "$cur" ;;
        key)
            if [[ -z $action ]]; then
                COMPREPLY=($(compgen -W "list add remove" -- "$cur"))
            fi ;;
        *) ;; # item names are secret: not completed
    esac
    return 0
}

complete -F _vault vault

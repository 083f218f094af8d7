/// The config file (`$XDG_CONFIG_HOME/vault/config.yaml`, else
/// `~/.config/vault/config.yaml`; README, "Backups that run themselves"):
///
///     profiles:
///       home:                       # a name: letters, digits, '.', '_', '-'
///         vault: ~/vault            # the vault (default: as for every command)
///         to: nas:/srv/vault        # or a remote's inbox (backup --to)
///         fingerprint: 3f2a-...
///         paths: [~/Documents, ~/Photos]
///         exclude: ['*.tmp']        # every backup option, by its long name:
///         iexclude: [], exclude-file: [], exclude-if-present: [.nobackup],
///         exclude-caches: true, exclude-larger-than: 2G, one-file-system: true,
///         files-from: [], stdin-from-command: 'pg_dump db', stdin-filename: db.sql,
///         tags: [nightly], host: laptop
///         hooks:
///           before: ['mount /mnt/photos']   # each run with /bin/sh; one failing stops the run
///           after: ['umount /mnt/photos']   # after a run that made a snapshot
///           error: ['notify-send "backup failed"']  # after a run that did not
///         ping: https://hc-ping.com/UUID    # GET URL/start, then URL/EXITCODE (healthchecks.io)
///         schedule: '*-*-* 02:00'       # a systemd calendar (`vault schedule` installs the timer)
///         keep: {daily: 7, weekly: 4}   # then `snapshots forget --keep-... --host HOST --prune` (a local vault: needs the password)
///         check: {every: 1w, read-data-subset: 10%}   # then `vault check` when the last passed one is that old
///         push: [nas]                   # then `vault push NAME` to each remote (a local vault; no password)
///         limit-upload: 2048                # KiB/s to remotes (and limit-download), as the global options
///         password-file: ~/.config/vault/password   # for keep: (or password-command:, key-file:); the command line's wins
///         notify: https://ntfy.sh/TOPIC     # POST a line when a run ends (ntfy); `notify-on: failure` for failures only
///
/// Unknown keys and values of the wrong type are refused, with their line:
/// a typo ("exclude_caches") must not silently back up what was to be left out.
public struct ConfigFile: Equatable, Sendable {
    public var profiles: [String: Profile]

    public struct Profile: Equatable, Sendable {
        public var name: String
        public var line: Int
        public var vault: String?
        /// `vault backup` words: the options, then the paths.
        public var backupArguments: [String] = []
        public var before: [String] = [], after: [String] = [], error: [String] = []
        public var ping: String?
        /// A systemd OnCalendar expression (`vault schedule`).
        public var schedule: String?
        /// An ntfy-style URL a message is POSTed to when a run ends, and
        /// whether only for a run that failed.
        public var notify: String?
        public var notifyFailuresOnly = false
        /// `snapshots forget` words for `keep:` (--keep-daily 7 ...); empty: none.
        public var forgetArguments: [String] = []
        /// The profile's `host:`, if it names one (forget is scoped to it).
        public var host: String?
        /// `vault check` words after the backup and forget (nil: no check),
        /// and how long a passed check counts (nil: every run).
        public var checkArguments: [String]?
        public var checkEvery: Int64?
        /// Remote names to `vault push` to after the backup (and forget).
        public var push: [String] = []
        /// How `keep:` unlocks when the command line does not say: a file,
        /// a command, or a key file (never the password itself).
        public var passwordFile: String?, passwordCommand: String?, keyFile: String?
        /// Bandwidth limits for the run's remotes, KiB/s (the global options').
        public var limitUpload: Int?, limitDownload: Int?
    }

    /// Options that take one value, and those that take a list, and flags;
    /// each is `--KEY` of `vault backup`.
    static let single = ["to", "fingerprint", "exclude-larger-than", "stdin-from-command", "stdin-filename", "host"]
    static let lists = ["exclude", "iexclude", "exclude-file", "exclude-if-present", "files-from", "files-from-verbatim",
                        "files-from-raw", "tags"]
    static let flags = ["exclude-caches", "one-file-system"]
    static let others = ["vault", "paths", "hooks", "ping", "schedule", "notify", "notify-on", "keep", "push", "check", "limit-upload", "limit-download",
                          "password-file", "password-command", "key-file"]
    static let keeps = ["last", "hourly", "daily", "weekly", "monthly", "yearly", "within"]

    public init(parsing bytes: [UInt8]) throws(ConfigError) {
        guard let root = try YAMLNode.parse(bytes) else { throw ConfigError(line: 0, problem: .noProfiles) }
        let top = try Self.mapping(root, key: nil)
        for (key, line, _) in top where key != "profiles" {
            throw ConfigError(line: line, key: key, problem: .unknownKey(known: ["profiles"]))
        }
        guard let (_, line, node) = top.first(where: { $0.key == "profiles" }) else {
            throw ConfigError(line: root.line, problem: .noProfiles)
        }
        var profiles: [String: Profile] = [:]
        for (name, nameLine, value) in try Self.mapping(node, key: "profiles") {
            guard !name.isEmpty, name.utf8.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }),
                  !name.hasPrefix("-") else {
                throw ConfigError(line: nameLine, key: "profiles." + name, problem: .invalidValue("a profile's name is letters, digits, '.', '_' and '-'"))
            }
            profiles[name] = try Self.profile(name, line: nameLine, value)
        }
        guard !profiles.isEmpty else { throw ConfigError(line: line, key: "profiles", problem: .noProfiles) }
        self.profiles = profiles
    }

    public func profile(_ name: String) throws(ConfigError) -> Profile {
        guard let p = profiles[name] else { throw ConfigError(line: 0, key: name, problem: .noSuchProfile(known: profiles.keys.sorted())) }
        return p
    }

    static func profile(_ name: String, line: Int, _ node: YAMLNode) throws(ConfigError) -> Profile {
        var p = Profile(name: name, line: line)
        let at = "profiles.\(name)."
        var paths: [String] = []
        var sendsTo: Int?, keepLine: Int?, pushLine: Int?, unlockLine: Int?, checkLine: Int?
        for (key, keyLine, value) in try mapping(node, key: "profiles." + name) {
            let full = at + key
            if single.contains(key) {
                let text = try scalar(value, key: full)
                if key == "host" { p.host = text }
                if key == "to" { sendsTo = keyLine }
                p.backupArguments += ["--" + key, text]
            } else if lists.contains(key) {
                let option = key == "tags" ? "--tag" : "--" + key
                for item in try list(value, key: full) { p.backupArguments += [option, item] }
            } else if flags.contains(key) {
                if try boolean(value, key: full) { p.backupArguments.append("--" + key) }
            } else if key == "vault" {
                p.vault = try scalar(value, key: full)
            } else if key == "paths" {
                paths = try list(value, key: full)
            } else if key == "ping" {
                p.ping = try url(value, key: full)
            } else if key == "keep" {
                keepLine = keyLine
                for (rule, ruleLine, n) in try mapping(value, key: full) {
                    guard keeps.contains(rule) else { throw ConfigError(line: ruleLine, key: full + "." + rule, problem: .unknownKey(known: keeps)) }
                    let text = try scalar(n, key: full + "." + rule)
                    // `within` is a duration ("30d"), the others a count; the forget command checks both again.
                    guard rule == "within" || (Int(text).map { $0 > 0 } ?? false) else {
                        throw ConfigError(line: n.line, key: full + "." + rule, problem: .invalidValue("a count of snapshots, 1 or more"))
                    }
                    p.forgetArguments += ["--keep-" + rule, text]
                }
            } else if key == "password-file" || key == "password-command" || key == "key-file" {
                guard p.passwordFile == nil && p.passwordCommand == nil && p.keyFile == nil else {
                    throw ConfigError(line: keyLine, key: full, problem: .invalidValue("one of password-file, password-command and key-file"))
                }
                unlockLine = keyLine
                let text = try scalar(value, key: full)
                guard !text.isEmpty else { throw ConfigError(line: value.line, key: full, problem: .invalidValue("a path or a command")) }
                if key == "password-file" { p.passwordFile = text } else if key == "key-file" { p.keyFile = text } else { p.passwordCommand = text }
            } else if key == "limit-upload" || key == "limit-download" {
                guard let kib = Int(try scalar(value, key: full)), kib > 0, kib <= 1 << 30 else {
                    throw ConfigError(line: value.line, key: full, problem: .invalidValue("KiB/s: a whole number above 0"))
                }
                if key == "limit-upload" { p.limitUpload = kib } else { p.limitDownload = kib }
            } else if key == "check" {
                checkLine = keyLine
                (p.checkArguments, p.checkEvery) = try Self.check(value, key: full)
            } else if key == "push" {
                pushLine = keyLine
                p.push = try list(value, key: full)
                // A remote's name as `vault remote add` takes it: never an option.
                guard !p.push.isEmpty, p.push.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("-") && $0.utf8.count <= 64 }) else {
                    throw ConfigError(line: value.line, key: full, problem: .invalidValue("push is a list of remote names ('vault remote list')"))
                }
            } else if key == "notify" {
                p.notify = try url(value, key: full)
            } else if key == "notify-on" {
                switch try scalar(value, key: full) {
                case "failure": p.notifyFailuresOnly = true
                case "always": p.notifyFailuresOnly = false
                default: throw ConfigError(line: value.line, key: full, problem: .invalidValue("notify-on is 'always' or 'failure'"))
                }
            } else if key == "schedule" {
                let when = try scalar(value, key: full)
                // A unit file line: no control characters (systemd checks the rest).
                guard !when.isEmpty, when.utf8.count <= 256, !when.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
                    throw ConfigError(line: value.line, key: full, problem: .invalidValue("a schedule is a systemd calendar, such as 'daily' or '*-*-* 02:00'"))
                }
                p.schedule = when
            } else if key == "hooks" {
                for (hook, hookLine, commands) in try mapping(value, key: full) {
                    switch hook {
                    case "before": p.before = try list(commands, key: full + ".before")
                    case "after": p.after = try list(commands, key: full + ".after")
                    case "error": p.error = try list(commands, key: full + ".error")
                    default: throw ConfigError(line: hookLine, key: full + "." + hook, problem: .unknownKey(known: ["after", "before", "error"]))
                    }
                }
            } else {
                throw ConfigError(line: keyLine, key: full, problem: .unknownKey(known: (single + lists + flags + others).sorted()))
            }
        }
        // A `--to` host holds no password: forgetting is the owner's.
        if let keepLine, sendsTo != nil {
            throw ConfigError(line: keepLine, key: at + "keep", problem: .invalidValue("keep goes with a local vault: a host that sends with 'to:' cannot forget (no password); forget on the owner's machine"))
        }
        if let unlockLine, sendsTo != nil {
            throw ConfigError(line: unlockLine, key: at + "password", problem: .invalidValue("a host that sends with 'to:' needs no password and must hold none"))
        }
        if let checkLine, sendsTo != nil {
            throw ConfigError(line: checkLine, key: at + "check", problem: .invalidValue("check goes with a local vault: a host that sends with 'to:' has none to check"))
        }
        if let pushLine, sendsTo != nil {
            throw ConfigError(line: pushLine, key: at + "push", problem: .invalidValue("push goes with a local vault: a host that sends with 'to:' has none to push"))
        }
        // Paths last, after "--": a path that starts with '-' is a path.
        if !paths.isEmpty { p.backupArguments += ["--"] + paths }
        return p
    }

    /// `check: true`, or a mapping of `every` (a duration), `read-data`
    /// (true) or `read-data-subset` (N% or n/m, which check reads again).
    static func check(_ node: YAMLNode, key: String) throws(ConfigError) -> ([String]?, Int64?) {
        if case .scalar = node { return (try boolean(node, key: key) ? [] : nil, nil) }
        var words: [String] = [], every: Int64?
        for (name, line, value) in try mapping(node, key: key) {
            switch name {
            case "every":
                guard let seconds = durationSeconds(try scalar(value, key: key + ".every")) else {
                    throw ConfigError(line: value.line, key: key + ".every", problem: .invalidValue("a duration, such as 1w or 30d"))
                }
                every = seconds
            case "read-data": if try boolean(value, key: key + ".read-data") { words.append("--read-data") }
            case "read-data-subset": words += ["--read-data-subset", try scalar(value, key: key + ".read-data-subset")]
            default: throw ConfigError(line: line, key: key + "." + name, problem: .unknownKey(known: ["every", "read-data", "read-data-subset"]))
            }
        }
        return (words, every)
    }

    static func mapping(_ node: YAMLNode, key: String?) throws(ConfigError) -> [(key: String, line: Int, value: YAMLNode)] {
        guard case .mapping(let pairs, _) = node else { throw ConfigError(line: node.line, key: key, problem: .wrongType(expected: "a mapping")) }
        return pairs
    }

    static func scalar(_ node: YAMLNode, key: String) throws(ConfigError) -> String {
        guard case .scalar(let text, _) = node else { throw ConfigError(line: node.line, key: key, problem: .wrongType(expected: "one value")) }
        return text
    }

    /// A list, or one value as a list of one.
    static func list(_ node: YAMLNode, key: String) throws(ConfigError) -> [String] {
        switch node {
        case .scalar(let text, _): return [text]
        case .sequence(let items, _): return try items.map { item throws(ConfigError) in try scalar(item, key: key) }
        case .mapping: throw ConfigError(line: node.line, key: key, problem: .wrongType(expected: "a list"))
        }
    }

    /// An http:// or https:// URL (`ping`, `notify`).
    static func url(_ node: YAMLNode, key: String) throws(ConfigError) -> String {
        let text = try scalar(node, key: key)
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else {
            throw ConfigError(line: node.line, key: key, problem: .invalidValue("an http:// or https:// URL"))
        }
        return text
    }

    static func boolean(_ node: YAMLNode, key: String) throws(ConfigError) -> Bool {
        switch try scalar(node, key: key) {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw ConfigError(line: node.line, key: key, problem: .wrongType(expected: "true or false"))
        }
    }
}

import Foundation
import System
import VaultCore
import VaultCrypto
import VaultRemote

/// `vault add`: drops files into the vault without the password (HPKE to
/// the vault's public key), so it works from cron with no terminal at all.
struct AddCommand: Command {
    static let name = "add"
    static let abstract = "add files without the password"
    static let nameOption = ValueOption<String>.text("--name", as: "NAME")
    static let compressionOption = ValueOption<String>.text("--compression", as: "MODE")
    static let compressOption = OptionalValueOption("--compress", as: "LEVEL")
    static let noCompressFlag = FlagOption("--no-compress")
    static let toOption = ValueOption<String>.text("--to", as: "TARGET")
    static let fingerprintOption = ValueOption<String>.text("--fingerprint", as: "FP")
    static let options = [nameOption.spec, compressionOption.spec, compressOption.spec, noCompressFlag.spec, toOption.spec,
                          fingerprintOption.spec]
    static let help = """
        Usage: vault add PATH... [--name NAME] [--compression MODE | --no-compress]
                         [--to TARGET [--fingerprint FP]]

        Encrypts each PATH into the vault. Needs no password and no terminal:
        items are sealed to the vault's public key and join the list at the next
        command that unlocks the vault. Each item is named after its file unless
        --name is given; two PATHs that would get one name are refused (exit 2).
        '-' reads standard input and needs --name. Adding under a name the vault
        holds makes a new version of that item (see 'vault list --versions').

        If some inputs cannot be read, the others are still added and vault
        exits with status 3.

        A PATH that is a folder is stored whole as one item (files, folders,
        symbolic links as links, modes and times); devices, FIFOs and sockets
        inside it are left out with a warning (exit 3).

        Options:
          --name NAME        the item's name (only with a single PATH)
          --compression MODE auto (the default): zstd, at the speed of the disk;
                             parts that do not compress (photos, video, archives)
                             are stored raw. max: xz, the smallest output, many
                             times slower. off: store raw. zstd[:LEVEL] (1-19)
                             or xz[:LEVEL] (0-9) choose a codec and level
          --no-compress      the same as --compression off
          --compress[=LEVEL] older spellings: --compression auto, or xz:LEVEL
          --to TARGET        a write-only drop-in straight into the inbox of the
                             vault copy at TARGET (an rclone path), from a machine
                             with no vault: only its header is read; the owner's
                             'vault pull' takes the items in
          --fingerprint FP   with --to: refuse unless the remote vault's public key
                             has this fingerprint ('vault info'); without it, the
                             first use shows the fingerprint and, on a terminal,
                             asks; it is remembered and later uses refuse another

        Examples:
          vault add passport.pdf tax-2024.pdf
          pg_dump mydb | vault add - --name mydb.sql
          vault --vault /srv/vault add --name report.txt /tmp/r.txt
          vault add --to s3:my-bucket/vault --fingerprint 3f2a-... scan.pdf
        """

    let paths: [String]
    /// nil: each item is named after its file.
    let itemName: String?
    let compression: Compression
    /// --to: a remote vault copy's inbox instead of the local vault.
    let remoteTarget: String?
    let fingerprint: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        paths = try arguments.oneOrMore("PATH")
        itemName = try arguments.value(Self.nameOption)
        compression = try Self.compression(arguments)
        remoteTarget = try arguments.value(Self.toOption).map { text throws(CLIError) in
            guard let t = RemoteNames.normalizedTarget(text) else { throw arguments.usageError("'\(text)' cannot be a remote target") }
            return t
        }
        fingerprint = try arguments.value(Self.fingerprintOption)
        if fingerprint != nil && remoteTarget == nil { throw arguments.usageError("--fingerprint goes with --to") }
        if itemName != nil && paths.count != 1 { throw arguments.usageError("--name needs exactly one PATH") }
        if itemName == nil && paths.contains("-") {
            throw arguments.usageError("reading standard input ('-') needs --name")
        }
        // Two inputs under one name would silently become one item's two
        // versions: refused before anything is added.
        var seen: [String: String] = [:]
        for path in paths {
            let name = Self.itemName(of: path)
            if let first = seen[name], first != path {
                throw arguments.usageError("'\(first)' and '\(path)' would both be named '\(name)'; "
                                           + "add them one at a time, each with --name")
            }
            seen[name] = path
        }
    }

    /// The item name a PATH gets without --name: its last component.
    static func itemName(of path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }

    /// `--compression MODE`, `--no-compress` or `--compress[=LEVEL]`, at most one of them.
    private static func compression(_ arguments: ParsedArguments) throws(CLIError) -> Compression {
        let given = [(try arguments.value(compressionOption)) != nil, arguments.isSet(noCompressFlag), arguments.isSet(compressOption)]
        let names = zip(given, [compressionOption.spec, noCompressFlag.spec, compressOption.spec]).filter(\.0).map(\.1.canonical)
        if names.count > 1 { throw arguments.usageError("\(names[0]) and \(names[1]) contradict each other") }
        if arguments.isSet(noCompressFlag) { return .none }
        if let mode = try arguments.value(compressionOption) {
            guard let c = Compression(parsing: mode) else {
                throw arguments.usageError("--compression takes auto, off, max, zstd[:1-19] or xz[:0-9], not '\(mode)'")
            }
            return c
        }
        if let level = arguments.value(compressOption) {
            guard let n = Int(level), Compression.xzPresets.contains(n) else {
                throw arguments.usageError("--compress=LEVEL needs a level from 0 to 9, not '\(level)'")
            }
            return .xz(level: n)
        }
        return .default
    }

    func run(_ context: Context) throws -> ExitCode {
        // --to: seal into a scratch vault holding only the remote's header,
        // then upload (RemoteDropIn).
        let remote = try remoteTarget.map { try context.remoteDropIn(to: $0, fingerprint: fingerprint) }
        let vault = try remote?.scratch ?? Vault(at: context.vaultDirectory)
        let result = try addAll(vault, context, batchEnvelopes: remote == nil)
        if let remote {
            let sent = try remote.upload()
            context.terminal.note("sent \(Format.count(sent, "drop-in")) to the inbox at \(Terminal.printable(remote.target)) (fingerprint \(remote.header.fingerprint))")
        }
        return result
    }

    /// `batchEnvelopes`: false for a remote's inbox, which takes single
    /// envelopes only (DropInBatch).
    private func addAll(_ vault: Vault, _ context: Context, batchEnvelopes: Bool) throws -> ExitCode {
        var added = 0, skipped = false
        var firstFailure: ExitCode?
        // Many paths land in groups, synced once per group (DropInBatch),
        // each while the next group's contents are written; each "added"
        // note is said once its drop-in is durable.
        let batch = DropInBatch(into: vault, expected: paths.count, batchEnvelopes: batchEnvelopes)
        // A failure that ends the add still lets the group landing in the
        // background finish, and says what it added.
        func failing(_ error: Error) -> Error {
            try? batch.finishLanding()
            return error
        }
        for path in paths {
            // A failure landing a group concerns the vault, not this path.
            if batch.isFull {
                do { try batch.landInBackground() } catch { throw failing(error) }
            }
            do {
                if RawArguments.isLossy(path) {
                    throw AddInputRefusal.pathNotUTF8
                }
                let progress = ProgressLine.start(context.terminal, "adding \(path)", total: FileHandleFD.size(of: path),
                                                   sharing: path == "-" ? [0] : [])
                defer { progress?.finish() }
                // Ctrl-C erases this add's own temp file at once rather than
                // leaving it (gigabytes, for a big file) until the next unlock.
                var token: Interrupts.Token?
                defer { token.map(Interrupts.unregister) }
                let announce: (String) -> Void = { temp in token = Interrupts.register { try? Syscall.unlink(temp) } }
                // Made when the drop-in has landed: only then does a batched
                // one's content have a name whose size can be looked at.
                var note: () -> String = { "" }
                let (entry, skippedInside) = try Self.dropIn(path, name: itemName, into: vault,
                                                             compression: compression, progress: progress?.update,
                                                             announce: announce, batch: batch) { [terminal = context.terminal] in
                    terminal.note(note())
                }
                progress?.finish()   // before the notes below, or its wipe would erase them
                added += 1
                for inner in skippedInside {
                    skipped = true
                    context.terminal.warning("skipped '\(path)/\(inner)': not a regular file, folder or symlink")
                }
                let what = entry.kind == .folder ? Format.count(entry.fileCount, "file") + ", " : ""
                // What compression saved, when it saved anything ('list' shows every blob's size).
                note = {
                    let stored = (batch.storedLength(of: entry) ?? vault.storedLength(of: entry)).flatMap { $0 < entry.size ? ", stored \(Format.size($0))" : nil } ?? ""
                    return "added '\(entry.name)' (\(what)\(Format.size(entry.size))\(stored))"
                }
            } catch let error where (error as? VaultError)?.isAboutOneInput ?? (error is SystemError || error is AddInputRefusal) {
                skipped = true
                let report = ErrorReport.cliError(for: error, vaultDirectory: nil)
                firstFailure = firstFailure ?? report.code
                context.terminal.warning("skipped '\(path)': \(report.message)")
            } catch {
                throw failing(error)
            }
        }
        try batch.land()
        // Partial (3) only when something was added: an add that added
        // nothing (an unwritable inbox) failed, with its first error's code.
        if added == 0, let firstFailure { throw ReportedError(firstFailure) }
        return skipped ? .partial : .ok
    }

    /// One input of `add`: stdin, a file, or a folder (with the paths of
    /// special files inside it that were left out).
    private static func dropIn(_ path: String, name: String?, into vault: Vault, compression: Compression,
                               progress: ((UInt64) -> Void)?, announce: @escaping (String) -> Void,
                               batch: DropInBatch, landed: @escaping () -> Void) throws -> (ManifestEntry, [String]) {
        if path == "-" {
            let now = Int64(Date().timeIntervalSince1970)
            return (try vault.dropIn(from: FileHandleFD(borrowing: 0), name: name!, mode: 0o600, modified: now,
                                     compression: compression, progress: progress, announce: announce,
                                     batch: batch, landed: landed), [])
        }
        guard let kind = try FileHandleFD.kind(of: path) else {
            throw SystemError(operation: .open, path: path, errno: .noSuchFile)
        }
        guard kind.regular || kind.directory else { throw AddInputRefusal.notFileOrFolder }
        let source = try FileHandleFD(readingFrom: path, followSymlinks: true)
        let status = try source.status()
        let itemName = name ?? Self.itemName(of: path)
        if status.directory {
            return try vault.dropIn(folder: path, name: itemName, mode: status.mode, modified: status.modified,
                                    compression: compression, announce: announce, batch: batch, landed: landed)
        }
        guard status.regular else { throw AddInputRefusal.notFileOrFolder }
        return (try vault.dropIn(from: source, name: itemName, mode: status.mode, modified: status.modified,
                                 compression: compression, progress: progress, announce: announce,
                                 batch: batch, landed: landed), [])
    }
}

/// An input `add` refuses by itself: it is skipped, the others go on.
enum AddInputRefusal: Error, Equatable {
    /// The path's bytes are not UTF-8, so no item name can be made of it.
    case pathNotUTF8
    /// Neither a regular file nor a folder (a device, a FIFO, a socket).
    case notFileOrFolder
}

extension VaultError {
    /// Errors that concern one input of `add` (skip it, go on with the rest)
    /// rather than the vault.
    var isAboutOneInput: Bool {
        switch self {
        case .invalidName, .changedWhileReading, .itemTooLarge, .inputTooLarge: return true
        default: return false
        }
    }
}

import Foundation
import System
import VaultCore
import VaultCrypto

/// rclone, run as a subprocess: the transport to every backend it knows.
/// vault never speaks a storage protocol itself and never sees storage
/// credentials: they stay in rclone's config (RCLONE_CONFIG, or
/// RCLONE_CONFIG_<NAME>_* variables), which the child inherits. Nothing
/// secret is ever on its argument vector.
///
/// One process per batch, not per file: lists go through `--files-from`
/// (a file of relative paths in a private scratch directory), so a push of
/// 10,000 small items is one `rclone copy` that runs its own parallel
/// transfers. (A long-lived `rclone rcd` would save the few process starts
/// of a push, at the price of a password-protected HTTP server on
/// 127.0.0.1; docs/FORMAT.md, "Remote copy", says why we chose batches.)
public final class Rclone: Sendable {
    public let program: String
    let environment: [String: String?]
    /// Private (0700) scratch directory for lists and rclone's output; erased on deinit.
    let scratch: String

    /// Flags on every run: errors only on stderr, and bounded waiting, so an
    /// unreachable remote fails in bounded time (about a minute at worst,
    /// a few seconds when the connection is refused).
    static let commonFlags = ["--log-level", "ERROR", "--retries", "2", "--low-level-retries", "3",
                              "--contimeout", "10s", "--timeout", "60s"]
    /// Parallel transfers for batches.
    static let batchFlags = ["--transfers", "8", "--checkers", "16"]

    /// Bandwidth limits in KiB/s (nil: none), handed to rclone's own
    /// limiter (`--bwlimit UP:DOWN`) on every run, the range server's too.
    public struct Limits: Equatable, Sendable {
        public var uploadKiB: Int?, downloadKiB: Int?
        public init(uploadKiB: Int? = nil, downloadKiB: Int? = nil) { (self.uploadKiB, self.downloadKiB) = (uploadKiB, downloadKiB) }

        var flags: [String] {
            guard uploadKiB != nil || downloadKiB != nil else { return [] }
            return ["--bwlimit", (uploadKiB.map { "\($0)Ki" } ?? "off") + ":" + (downloadKiB.map { "\($0)Ki" } ?? "off")]
        }
    }
    let limitFlags: [String]

    /// `program` is "rclone" unless the environment's VAULT_RCLONE names
    /// another; `scratchBase` is a directory of this user's (the state directory).
    public init(program: String, scratchBase: String, environment: [String: String?] = [:], limits: Limits = .init()) throws {
        self.program = program
        self.environment = environment
        self.limitFlags = limits.flags
        try Vault.ensureDirectory(scratchBase)
        ScratchNames.removeAbandoned(in: scratchBase, prefix: "rclone-")
        scratch = scratchBase + "/" + (try ScratchNames.make("rclone-"))
        try Syscall.mkdir(scratch)
    }

    deinit { _ = Eraser.erase(scratch) }

    /// Runs rclone with `arguments`; returns its standard output (at most
    /// `outputLimit` bytes). Exit statuses in `tolerated` return nil output
    /// instead of failing (3: directory not found, 4: file not found).
    /// rclone logs JSON lines (`--use-json-log`) to a file; with `progress`,
    /// its transfer statistics (every half second) are read from there while
    /// it runs and passed on as (bytes done, bytes in all).
    /// With `stream`, standard output is not read whole: `stream` gets the
    /// file rclone wrote it to (any size), and nil is returned.
    @discardableResult
    func run(_ operation: RcloneOperation, _ arguments: [String], outputLimit: Int = 1 << 16,
             tolerated: Set<Int32> = [], progress: ((UInt64, UInt64) -> Void)? = nil,
             stream: ((FileHandleFD) throws -> Void)? = nil) throws -> [UInt8]? {
        let out = scratch + "/stdout", err = scratch + "/stderr"
        let outFile = try FileHandleFD(creating: out), errFile = try FileHandleFD(creating: err)
        defer { try? Syscall.unlink(out); try? Syscall.unlink(err) }
        let flags = Self.commonFlags + limitFlags + (progress == nil ? [] : Self.statsFlags) + arguments
        let pid: Int32
        do {
            pid = try Syscall.spawn(program, arguments: flags, stdout: outFile.fd, stderr: errFile.fd, environment: environment)
        } catch let error as SystemError where error.errno == .noSuchFile || error.errno == .permissionDenied {
            throw RemoteError.rcloneMissing(program: program)
        }
        let termination: Termination
        if let progress {
            let log = try FileHandleFD(readingFrom: err)
            var offset: UInt64 = 0
            var partial: [UInt8] = []
            while true {
                let ended = try Syscall.exitStatus(pid)
                offset = try Self.readLines(log, from: offset, partial: &partial) { line in
                    if let (done, total) = Self.stats(line) { progress(done, total) }
                }
                if let ended { termination = ended; break }
                Syscall.sleep(0.2)
            }
        } else {
            termination = try Syscall.wait(pid)
        }
        switch termination {
        case .exited(0):
            break
        case .exited(let code) where tolerated.contains(code):
            return nil
        case .exited(let code):
            let message = try Self.lastError(in: err)
            throw RemoteError.rcloneFailed(operation: operation, failure: message.isEmpty ? .exited(code) : .said(message))
        case .signaled(let signal):
            throw RemoteError.rcloneFailed(operation: operation, failure: .signaled(signal))
        }
        let reader = try FileHandleFD(readingFrom: out)
        if let stream {
            try stream(reader)
            return nil
        }
        guard reader.size <= UInt64(outputLimit) else {
            throw RemoteError.malformedRemote(.answerTooLarge(operation: operation, limit: outputLimit))
        }
        return try reader.readAll(limit: outputLimit)
    }

    /// Statistics every half second, as JSON log lines, for `progress`.
    static let statsFlags = ["--use-json-log", "--log-level", "NOTICE", "--stats", "500ms", "--stats-log-level", "NOTICE"]

    /// Reads what was appended to `file` since `offset`, calls `body` with
    /// each complete line (at most 64 KiB; longer ones are skipped), keeps
    /// an unfinished line in `partial`; returns the new offset.
    static func readLines(_ file: FileHandleFD, from offset: UInt64, partial: inout [UInt8],
                          _ body: ([UInt8]) -> Void) throws -> UInt64 {
        var offset = offset
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try file.read(at: offset, into: $0) }
            if n == 0 { return offset }
            offset += UInt64(n)
            partial += buffer[..<n]
            while let newline = partial.firstIndex(of: 10) {
                body(Array(partial[..<newline]))
                partial.removeSubrange(...newline)
            }
            if partial.count > 1 << 16 { partial.removeAll() }
        }
    }

    /// (bytes, totalBytes) from a JSON log line with a "stats" object.
    static func stats(_ line: [UInt8]) -> (UInt64, UInt64)? {
        guard line.first == UInt8(ascii: "{"),
              let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
              let stats = object["stats"] as? [String: Any],
              let done = (stats["bytes"] as? NSNumber)?.int64Value, let total = (stats["totalBytes"] as? NSNumber)?.int64Value,
              done >= 0, total >= 0 else { return nil }
        return (UInt64(done), UInt64(total))
    }

    /// The last error rclone reported (its final "Failed to ..." line, or
    /// the last error-level JSON line), without timestamp, from the last
    /// 16 KiB of its log.
    static func lastError(in path: String) throws -> String {
        let log = try FileHandleFD(readingFrom: path)
        let start = log.size > 16384 ? log.size - 16384 : 0
        var tail = [UInt8](repeating: 0, count: Int(log.size - start))
        let n = try tail.withUnsafeMutableBytes { try log.read(at: start, into: $0) }
        for line in tail[..<n].split(separator: 10).reversed() {
            if line.first == UInt8(ascii: "{") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                      object["stats"] == nil, let level = object["level"] as? String, level == "error" || level == "critical",
                      let message = object["msg"] as? String else { continue }
                return Self.lastLine(Array(message.utf8))
            }
            let text = Self.lastLine(line)
            if !text.isEmpty { return text }
        }
        return ""
    }

    /// The last non-empty line of `bytes`, without its timestamp, control
    /// characters made spaces, cut to 300 bytes: what the user reads after
    /// "remote unreachable".
    static func lastLine(_ bytes: some Collection<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard var line = text.split(whereSeparator: \.isNewline).last.map(String.init) else { return "" }
        // "2026/12/01 02:28:35 ERROR : ..." -> "ERROR : ..."
        let parts = line.split(separator: " ", maxSplits: 2)
        if parts.count == 3, parts[0].count == 10, parts[0].contains("/"), parts[1].contains(":") { line = String(parts[2]) }
        line = String(line.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : Character($0) })
        return line.utf8.count > 300 ? String(decoding: Array(line.utf8.prefix(300)), as: UTF8.self) + "…" : line
    }

    /// Writes `paths` (relative, one a line) to a list for `--files-from`.
    func listFile(_ paths: [String]) throws -> String {
        let path = scratch + "/files-" + Hex.encode(SecureRandom.bytes(4))
        let file = try FileHandleFD(creating: path)
        let bytes = Array(paths.map { $0 + "\n" }.joined().utf8)
        try bytes.withUnsafeBytes { try file.write($0) }
        return path
    }
}

// The operations vault needs, each one rclone run.
extension Rclone {
    struct ListEntry: Decodable { let Path: String; let Size: Int64; let IsDir: Bool? }

    /// The most entries a listing may have: a full manifest's blobs, the
    /// drop-ins of a very busy inbox (two files each), and room for the top
    /// level. A remote that lists more is not a vault copy (or is an attack
    /// on memory): refused before more is read.
    static let maxListing = Manifest.maxEntries + 2 * 200_000 + 64
    /// The longest line of a listing: one object, with a path far longer
    /// than any vault name.
    static let maxListingLine = 1 << 16

    /// Every file under `target` with its size; empty if the target does
    /// not exist. Read as a stream, one entry a line (`lsjson` writes
    /// "[", then one object a line, then "]"), so memory grows with the
    /// entries kept, never with the answer's bytes.
    public func list(_ target: String) throws -> [String: UInt64] {
        var files: [String: UInt64] = [:]
        var found = false
        try run(.list, ["lsjson", "-R", "--files-only", "--no-modtime", "--no-mimetype", "--fast-list", target],
                tolerated: [3], stream: { file in
                    found = true
                    files = try Self.parseListing(file)
                })
        return found ? files : [:]
    }

    /// The listing in `file`: exactly "[" on the first line, "]" on the
    /// last, one JSON object (with a trailing comma but on the last) on each
    /// line between, at most `maxListing` of them.
    static func parseListing(_ file: FileHandleFD, maxEntries: Int = maxListing) throws -> [String: UInt64] {
        var offset: UInt64 = 0
        return try parseListing(maxEntries: maxEntries) { buffer in
            let n = try file.read(at: offset, into: buffer)
            offset += UInt64(n)
            return n
        }
    }

    /// `parseListing` of bytes in memory (tests, fuzzing).
    static func parseListing(_ output: [UInt8], maxEntries: Int = maxListing) throws -> [String: UInt64] {
        var offset = 0
        return try parseListing(maxEntries: maxEntries) { buffer in
            let n = min(buffer.count, output.count - offset)
            output.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
            offset += n
            return n
        }
    }

    /// The parser itself, over `read` (fills a buffer, returns how many
    /// bytes; 0 at the end).
    static func parseListing(maxEntries: Int, read: (UnsafeMutableRawBufferPointer) throws -> Int) throws -> [String: UInt64] {
        let bad = RemoteError.malformedRemote(.listingNotJSON)
        var files: [String: UInt64] = [:]
        var lines = 0, closed = false, partial: [UInt8] = []
        let decoder = JSONDecoder()
        func line(_ bytes: [UInt8]) throws {
            defer { lines += 1 }
            if lines == 0 { guard bytes == Array("[".utf8) else { throw bad }; return }
            guard !closed else { throw bad }
            if bytes == Array("]".utf8) { closed = true; return }
            guard lines <= maxEntries else {
                throw RemoteError.malformedRemote(.tooManyFiles(max: maxEntries))
            }
            var object = bytes[...]
            if object.last == UInt8(ascii: ",") { object = object.dropLast() }
            guard object.first == UInt8(ascii: "{"), let e = try? decoder.decode(ListEntry.self, from: Data(object)) else { throw bad }
            guard e.IsDir != true else { return }
            guard e.Size >= 0 else { throw RemoteError.malformedRemote(.negativeSize(e.Path)) }
            files[e.Path] = UInt64(e.Size)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try read($0) }
            if n == 0 { break }
            var start = 0
            while let newline = buffer[start..<n].firstIndex(of: 10) {
                partial += buffer[start..<newline]
                try line(partial)
                partial.removeAll(keepingCapacity: true)
                start = newline + 1
            }
            partial += buffer[start..<n]
            guard partial.count <= maxListingLine else { throw bad }
        }
        if !partial.isEmpty { try line(partial) }
        guard closed else { throw bad }
        return files
    }


    /// The files at the top of `target` (header, manifest, temps): cheap.
    public func listTop(_ target: String) throws -> [String: UInt64] {
        var files: [String: UInt64] = [:]
        try run(.list, ["lsjson", "--max-depth", "1", "--files-only", "--no-modtime", "--no-mimetype", target],
                tolerated: [3], stream: { files = try Self.parseListing($0) })
        return files
    }

    /// The first `count` bytes of a remote file (its whole content if shorter).
    public func head(_ path: String, count: Int) throws -> [UInt8] {
        try run(.read, ["cat", "--count", String(count), path], outputLimit: count) ?? []
    }

    /// The first `count` bytes of a remote file, or nil if there is no
    /// such file (rclone's "not found" statuses 3 and 4; some backends
    /// report a missing object as a plain error, so the listing stays the
    /// first authority on what exists).
    public func headIfPresent(_ path: String, count: Int) throws -> [UInt8]? {
        // On S3 a missing object reads as an empty listing: no bytes at all.
        let bytes = try run(.read, ["cat", "--count", String(count), path], outputLimit: count, tolerated: [3, 4])
        return bytes?.isEmpty == true ? nil : bytes
    }

    /// A whole remote file of at most `limit` bytes, or nil if it is not
    /// there (statuses 3 and 4). Read with `copyto` into the scratch
    /// directory, which asks the remote for that one object (a stat, then a
    /// read), where `cat` lists the directory it is in: a create-only host
    /// (issue 41) may read its header and record but list nothing. rclone
    /// stops past `limit` (`--max-transfer`, hard): a remote cannot fill
    /// this disk. One try, not rclone's three: "not there" is an answer.
    public func fetch(_ path: String, limit: Int) throws -> [UInt8]? {
        let local = scratch + "/fetch-" + Hex.encode(SecureRandom.bytes(8))
        defer { try? Syscall.unlink(local) } // the scratch directory goes at exit anyway
        guard try run(.read, ["copyto", "--no-check-dest", "--retries", "1", "--max-transfer", String(limit + 1),
                              "--cutoff-mode", "hard", path, Self.local(local)], tolerated: [3, 4]) != nil else { return nil }
        guard let status = try Syscall.status(of: local) else { return nil }
        guard status.size <= UInt64(limit) else {
            throw RemoteError.malformedRemote(.answerTooLarge(operation: .read, limit: limit))
        }
        return try VaultDirectory.readFile(local, limit: limit)
    }

    /// A local path as rclone must get it: rclone reads `name:rest` as a
    /// remote called `name`, so a relative path (a vault at `col:on`) goes
    /// as `./col:on`; absolute paths are never remote names.
    static func local(_ path: String) -> String {
        path.hasPrefix("/") || path.hasPrefix("./") ? path : "./" + path
    }

    /// Uploads `paths` (relative to the local `directory`) to the same paths under `target`.
    public func upload(_ paths: [String], from directory: String, to target: String, createOnly: Bool = false,
                       progress: ((UInt64, UInt64) -> Void)? = nil) throws {
        try copy(.upload, paths, from: Self.local(directory), to: target, extra: createOnly ? Self.createOnlyFlags : [], progress: progress)
    }

    /// What an upload by a host that may only create objects needs (issue
    /// 41), each a no-op on other backends: no modification time set after
    /// the write (SFTP's setstat, which such a server refuses), no bucket
    /// check or creation and no HEAD of what was written (S3: rights the
    /// host may not have).
    static let createOnlyFlags = ["--sftp-set-modtime=false", "--s3-no-check-bucket", "--s3-no-head"]

    /// Downloads `paths` (relative to `target`) into the local `directory`.
    public func download(_ paths: [String], from target: String, into directory: String,
                         progress: ((UInt64, UInt64) -> Void)? = nil) throws {
        try copy(.download, paths, from: target, to: Self.local(directory), progress: progress)
    }

    /// One `rclone copy` of `paths` (relative to `source`) to the same paths
    /// under `destination`, listed in a file rather than traversed.
    private func copy(_ what: RcloneOperation, _ paths: [String], from source: String, to destination: String,
                      extra: [String] = [], progress: ((UInt64, UInt64) -> Void)?) throws {
        guard !paths.isEmpty else { return }
        let list = try listFile(paths)
        try run(what, ["copy", source, destination, "--files-from", list, "--no-traverse", "--no-check-dest"] + Self.batchFlags + extra,
                progress: progress)
    }

    /// One local file to one remote path.
    public func uploadFile(_ local: String, to remote: String) throws {
        try run(.upload, ["copyto", "--no-check-dest", Self.local(local), remote])
    }

    /// A server-side move (a rename on local and SFTP backends, a copy
    /// then delete on S3): whoever reads `to` sees the old or the new
    /// file whole, never a part. `--no-check-dest` is what makes that so:
    /// without it rclone compares the two first, and then either deletes
    /// `to` before renaming (a kill in between left a remote without its
    /// manifest: found by RemoteCrashTests) or, when size and time happen
    /// to match, deletes `from` and keeps the old file.
    ///
    /// Some servers refuse a move onto an existing name that way (WebDAV
    /// answers 412: rclone then sends MOVE without overwrite); for them the
    /// move is tried again as rclone does it by default, delete then move,
    /// with the window a kill can fall into (SECURITY.md, "Off-site copies").
    /// That retry still compares: with `--ignore-times`, a file of the same
    /// size and second as the old one replaces it too. Without it, a host
    /// record published twice within a second at the same size (SFTP keeps
    /// seconds) left the older one: the host then reused a repacked pack
    /// and its snapshot was refused (AppendOnlyHostTests, now and then under
    /// the whole suite's load; replayed against `rclone serve sftp`).
    public func move(_ from: String, to: String) throws {
        do {
            try run(.move, ["moveto", "--no-check-dest", from, to])
        } catch RemoteError.rcloneFailed {
            try run(.move, ["moveto", "--ignore-times", from, to])
        }
    }

    /// Writes `bytes` as `target/name` the way a host's drop-ins go up
    /// (createOnly: a bare PUT or create, nothing read first).
    public func uploadBytes(_ bytes: [UInt8], as name: String, to target: String) throws {
        let local = scratch + "/up-" + Hex.encode(SecureRandom.bytes(8))
        try Syscall.mkdir(local)
        defer { _ = Eraser.erase(local) }
        try VaultDirectory.atomicWrite(bytes, to: local + "/" + name, mode: 0o600)
        try upload([name], from: local, to: target, createOnly: true)
    }

    /// Deletes `target/name` (one try, not rclone's three): a refusal throws.
    public func deleteExisting(_ name: String, in target: String) throws {
        let list = try listFile([name])
        try run(.delete, ["delete", target, "--files-from", list, "--no-traverse", "--retries", "1"])
    }

    /// Deletes `paths` (relative to `target`).
    public func delete(_ paths: [String], in target: String) throws {
        guard !paths.isEmpty else { return }
        let list = try listFile(paths)
        try run(.delete, ["delete", target, "--files-from", list, "--no-traverse"] + Self.batchFlags, tolerated: [3, 4])
    }
}

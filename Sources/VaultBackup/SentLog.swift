import ByteLayout
import System
import VaultCore
import VaultCrypto

// What a `backup --to` host sent, in order, and the record generation it
// last trusted: two files in its cache directory for that target
// (docs/FORMAT.md, "Host records"), 0600:
//
//   sent        "VAULTSL1" || (id (16) || SHA-256(id)[0..<4])*     (appended and synced per drop-in)
//   record-seen "vault record seen v1\n" || generation (decimal) || "\n"
//
// An id goes in once its drop-in (content, then envelope) is whole in the
// remote's inbox. Its position is the order the host sent things in,
// which is what the host decides from: a pack sent after the newest of
// its snapshots the owner has taken in may still be waiting in the inbox
// (the owner has not seen it yet); one sent before it was in the inbox
// the owner took that snapshot from, so if the record does not list it as
// usable it was taken in and pruned, or set aside. A torn or damaged
// entry ends the log: what came after it is not trusted (stored again).

public final class SentLog {
    static let magic = Array("VAULTSL1".utf8)
    static let entryLength = 20
    /// 2^24 drop-ins (half a petabyte of packs): a longer file is not ours.
    static let maxLength = magic.count + (1 << 24) * entryLength

    let path: String
    let seenPath: String
    /// Each id's position in the order sent, and the ids in that order.
    private(set) var position: [[UInt8]: Int] = [:]
    private var order: [[UInt8]] = []
    /// The file is there and every byte of it was read as entries.
    private var whole = false

    /// Reads the log in `directory` (absent: nothing sent yet).
    public init(directory: String) throws {
        path = directory + "/sent"
        seenPath = directory + "/record-seen"
        guard let bytes = try? VaultDirectory.readFile(path, limit: Self.maxLength),
              bytes.count >= Self.magic.count, Array(bytes.prefix(Self.magic.count)) == Self.magic else { return }
        var r = ByteReader(Array(bytes.dropFirst(Self.magic.count)))
        while r.remaining >= Self.entryLength {
            let id = try r.bytes(16), sum = try r.bytes(4)
            guard try Self.sum(id) == sum else { break }
            if position[id] == nil { order.append(id); position[id] = position.count }
        }
        whole = r.isAtEnd
    }

    static func sum(_ id: [UInt8]) throws -> [UInt8] { Array(try SHA256.hash(id).prefix(4)) }

    /// Appends `id` (hex) and syncs: its drop-in is whole in the inbox. A
    /// log that was absent, or ended in a torn or damaged entry, is
    /// written anew (atomically) with what it held, so nothing appended
    /// lands after bytes a reader stops at.
    public func append(_ hex: String) throws {
        guard let id = Hex.decode(hex), id.count == 16, position[id] == nil else { return }
        order.append(id)
        position[id] = position.count
        if whole {
            let fd = try Syscall.open(FilePath(path), [.writeOnly, .noFollow, .append])
            defer { Syscall.close(fd) }
            try Syscall.writeFully(fd, id + (try Self.sum(id)), path: path)
            try Syscall.fsync(fd, path: path)
        } else {
            var out = Self.magic
            for i in order { out += i + (try Self.sum(i)) }
            try VaultDirectory.atomicWrite(out, to: path, mode: 0o600)
            whole = true
        }
    }

    /// The highest record generation this host trusted (nil: none yet).
    public func seenGeneration() -> UInt64? {
        guard let raw = try? VaultDirectory.readFile(seenPath, limit: 64) else { return nil }
        let lines = String(decoding: raw, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0] == "vault record seen v1", lines[2].isEmpty, let g = UInt64(lines[1]) else { return 0 }
        return g
    }

    public func rememberGeneration(_ generation: UInt64) throws {
        try VaultDirectory.atomicWrite(Array("vault record seen v1\n\(generation)\n".utf8), to: seenPath, mode: 0o600)
    }

    /// Whether the pack `id` can be reused, by `record` (nil: the owner has
    /// published none for this host yet) and the order things were sent.
    public func presence(of id: [UInt8], record: HostRecord?) -> PackPresence {
        if record?.usable.contains(id) == true { return .present }
        if record?.gone.contains(id) == true { return .gone }
        guard let sent = position[id] else { return .gone }
        let newestTaken = record?.taken.compactMap { position[$0] }.max() ?? -1
        return sent > newestTaken ? .present : .gone
    }
}

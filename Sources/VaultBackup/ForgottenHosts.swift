import System
import VaultCore

// The record names of hosts whose snapshots this vault forgot
// (docs/FORMAT.md, "Host records"), at `hosts.forgotten` in the vault
// directory, machine-local:
//
//   "vault forgotten hosts v1\n" || (32 lower-case hex digits || "\n")*
//
// A host's piece key reaches the owner only inside its snapshots, so once
// the last of them is forgotten the vault can seal no record for it, and
// only a name `hosts/` already held used to be retired. A host whose
// record was never published (its snapshots taken in and forgotten
// between two publications, or taken in from the local inbox) then read
// "none published yet", and went on naming packs prune had deleted: every
// later snapshot of it was refused (the parties model's seed
// 14769867183226418196). Forgetting a snapshot keeps its host's name
// here; each publication retires the names with no current record.
//
// The file is a hint about other machines' hosts, never a verdict on this
// vault's data: one that does not parse (or holds over 100,000 names)
// reads as empty, which is how vaults were before it.
public enum ForgottenHosts {
    static let magic = Array("vault forgotten hosts v1\n".utf8)
    static let maxNames = 100_000

    static func path(_ vault: String) -> String { vault + "/hosts.forgotten" }

    /// The names kept; empty when there is no file or it does not parse.
    public static func read(vault: String) -> Set<String> {
        // A hint: a file that cannot be read is as none.
        guard let bytes = try? VaultDirectory.readFile(path(vault), limit: magic.count + 33 * maxNames),
              bytes.starts(with: magic) else { return [] }
        var names = Set<String>()
        for line in bytes.dropFirst(magic.count).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
            guard line.count == 32, line.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return [] }
            names.insert(String(decoding: line, as: UTF8.self))
        }
        // The last line ends with "\n": nothing may follow it.
        guard bytes.last == UInt8(ascii: "\n") || bytes.count == magic.count else { return [] }
        return names
    }

    /// Adds the names of the hosts of `snapshots`, atomically (past
    /// `maxNames`, no more are kept).
    public static func add(hostsOf snapshots: [Snapshot], vaultID: [UInt8], vault: String) throws {
        try add(names: Set(snapshots.map { try HostRecord.name(key: $0.key, vaultID: vaultID) }), vault: vault)
    }

    /// Adds record names (32 lower-case hex digits each).
    static func add(names new: Set<String>, vault: String) throws {
        var names = read(vault: vault)
        guard !new.isSubset(of: names), names.count < maxNames else { return }
        names.formUnion(new)
        try VaultDirectory.atomicWrite(magic + names.sorted().prefix(maxNames).flatMap { Array($0.utf8) + [UInt8(ascii: "\n")] },
                                       to: path(vault), mode: 0o600)
    }
}

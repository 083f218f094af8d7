import System
import VaultCore

// The host record names of hosts whose snapshots were forgotten
// (docs/FORMAT.md, "Host records"): the manifest's list
// (ForgottenHostNames in VaultCore), which sync carries to every copy of
// the vault, and each publication retires the names with no current record.
//
// A host's piece key reaches the owner only inside its snapshots, so once
// the last of them is forgotten the vault can seal no record for it, and
// only a name `hosts/` already held used to be retired. A host whose
// record was never published (its snapshots taken in and forgotten
// between two publications, or taken in from the local inbox) then read
// "none published yet", and went on naming packs prune had deleted: every
// later snapshot of it was refused (the parties model's seed
// 14769867183226418196).
//
// Vaults written by the version before manifest version 7 kept the names
// machine-local, at `hosts.forgotten`:
//
//   "vault forgotten hosts v1\n" || (32 lower-case hex digits || "\n")*
//
// That file is still read (a hint: one that does not parse, or holds over
// 100,000 names, reads as empty), and the next `snapshots forget` moves its
// names into the manifest and removes it.
public enum ForgottenHosts {
    static let magic = Array("vault forgotten hosts v1\n".utf8)
    static let maxNames = ForgottenHostNames.maxCount

    static func path(_ vault: String) -> String { vault + "/hosts.forgotten" }

    /// Every name to retire where it has no current record: the manifest's
    /// and the old machine-local file's, as 32 hex digits.
    public static func all(_ vault: UnlockedVault) -> Set<String> {
        Set(vault.manifest.forgottenHosts.names.map(Hex.encode)).union(legacy(vault: vault.vault.paths.root))
    }

    /// The names of the hosts of `snapshots` (16 bytes each), with the old
    /// file's, for `removeBackupStorage(_:forgettingHosts:)`.
    public static func names(hostsOf snapshots: [Snapshot], vaultID: [UInt8], vault: String) throws -> [[UInt8]] {
        let new = try snapshots.map { try HostRecord.name(key: $0.key, vaultID: vaultID) }
        return Set(new).union(legacy(vault: vault)).sorted().compactMap(Hex.decode)
    }

    /// Once the manifest holds the old file's names, the file goes. A file
    /// left behind (the unlink failed) only repeats names the manifest has.
    public static func removeLegacy(vault: String) {
        // Best effort: see above.
        try? Syscall.unlink(path(vault))
    }

    /// The old file's names; empty when there is none or it does not parse.
    static func legacy(vault: String) -> Set<String> {
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
}

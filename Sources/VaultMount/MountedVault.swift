import VaultCodecs
import VaultCore

/// The mounted vault as libfuse's threads see it: the two reads a mount
/// makes, and nothing else of `UnlockedVault`.
///
/// @unchecked Sendable: `UnlockedVault` is not Sendable, because writing
/// changes it (its manifest, its writer lock, its header after a rekey).
/// A mount never writes: `MountCommand` releases the writer lock before it
/// mounts and then only waits for `run` to return, so nothing changes the
/// vault while its callbacks run, and the two methods here only read it
/// (its paths, and the entry they are given) and open files of their own.
struct MountedVault: @unchecked Sendable {
    private let vault: UnlockedVault

    init(_ vault: UnlockedVault) { self.vault = vault }

    /// `UnlockedVault.open`: an item opened once for many reads.
    func open(_ entry: ManifestEntry) throws -> OpenedItem { try vault.open(entry) }

    /// `UnlockedVault.index(folder:)`: where a folder item's files lie.
    func index(folder entry: ManifestEntry) throws -> FolderIndex { try vault.index(folder: entry) }
}

import System
import VaultCore
import VaultCrypto

/// Names for the scratch and staging directories remotes use, which say who
/// made them: `<prefix><pid>-<start time>-<random>`. A process killed
/// mid-way (a push, a clone) leaves its directory behind; the next one with
/// the same prefix erases those whose maker no longer runs (a reused pid
/// has another start time), as `vault move receive` does with its staging.
enum ScratchNames {
    static func make(_ prefix: String) throws -> String {
        guard let start = Syscall.startTime(of: Syscall.processID) else {
            throw VaultError.noProcessStartTime
        }
        return "\(prefix)\(Syscall.processID)-\(start)-" + Hex.encode(SecureRandom.bytes(4))
    }

    /// Erases `parent/<prefix>*` left by processes that are gone.
    static func removeAbandoned(in parent: String, prefix: String) {
        for entry in (try? VaultDirectory.names(in: parent)) ?? [] where entry.hasPrefix(prefix) {
            let owner = entry.dropFirst(prefix.count).split(separator: "-")
            if owner.count == 3, let pid = Int32(owner[0]), let start = UInt64(owner[1]),
               Syscall.processRuns(pid, since: start) { continue }
            _ = Eraser.erase(parent + "/" + entry)
        }
    }
}

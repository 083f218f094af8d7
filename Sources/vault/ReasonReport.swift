import System
import VaultAgent
import VaultBackup
import VaultCodecs
import VaultCore
import VaultCrypto
import VaultMove
import VaultRemote

// The reasons the libraries return as cases, worded: the part of a message
// after "refused:", "skipped '...':" or "item '...':". The libraries build
// no English (issue 39); each switch here is exhaustive, so a new case does
// not compile until someone decides how it reads.

extension ErrorReport {
    /// Why absorb left a backup snapshot waiting (`vault: warning: backup
    /// NAME was refused: ...`).
    static func words(for refusal: SnapshotRefusal) -> String {
        switch refusal {
        case .unreadable(let errno):
            return "it cannot be read (\(errno))"
        case .doesNotOpen:
            return "it does not open (corrupted or tampered)"
        case .madeBeforeRepack(let first, let count):
            return "it was made before \(count == 1 ? "a pack it needs was" : "\(count) packs it needs were") repacked (\(first)); back up again"
        case .packsMissing(let first, let count):
            return "\(count == 1 ? "a pack it needs is" : "\(count) packs it needs are") missing or damaged (\(first.joined(separator: ", "))\(count > first.count ? ", ..." : ""))"
        }
    }

    /// What `check` found wrong with an item's blob.
    static func words(for problem: CheckReport.Problem.Kind) -> String {
        switch problem {
        case .blobMissing: "blob missing"
        case .corrupted: "corrupted or tampered"
        case .unsafeEntry(let path, let reason): "entry '\(path)': \(words(for: reason))"
        }
    }

    /// What `check` found wrong with a backup snapshot.
    static func words(for problem: SnapshotCheck.Problem) -> String {
        switch problem {
        case .damaged(let damage): words(for: damage)
        case .failed(let error): cliError(for: error, vaultDirectory: nil).message
        }
    }

    /// What is wrong with a snapshot ("snapshot ID is corrupted or tampered with: ...").
    static func words(for damage: SnapshotDamage) -> String {
        switch damage {
        case .recordDoesNotParse: "its record does not parse"
        case .referenceOutsidePacks: "a reference points outside its packs"
        case .pieceCorrupted(let pack): "a piece in \(pack) is corrupted or tampered"
        case .packNotInVault(let pack): "\(pack) is not in the vault"
        case .pieceNotKeptInRepack(let pack): "a piece it needs was not kept when \(pack) was repacked"
        case .storageCorrupted(let name): "\(name) is corrupted or tampered"
        case .treeDoesNotParse: "a directory's record does not parse"
        case .nestedTooDeep: "its directories are nested too deep"
        case .moreEntriesThanCounted: "it has more entries than it says"
        case .tooManyEntries: "it has too many entries"
        case .corruptedOrTampered: "corrupted or tampered"
        }
    }

    /// Why `snapshots restore` skipped a path.
    static func words(for skip: RestoreSkip) -> String {
        switch skip {
        case .notADirectoryThere: "something that is not a directory is there"
        case .directoryThere: "a directory is there"
        case .otherContent: "it exists with other content"
        case .exists: "it exists"
        }
    }

    /// Why extraction refused a folder item's entry.
    static func words(for refusal: ArchiveError.Refusal) -> String {
        switch refusal {
        case .emptyPath: "empty path"
        case .absolutePath: "absolute path"
        case .parentDirectory: "path contains '..'"
        case .pathTooLong: "path too long"
        case .specialFile(let type): "\(words(for: type)), not a file, directory or symlink"
        case .alreadyExists: "already exists (named twice in the archive)"
        case .throughSymlink: "would be written through a symlink"
        case .parentNotDirectory: "a parent is not a directory"
        case .hardLinkOutside: "hard link to something outside the archive"
        case .library(let message): message
        }
    }

    /// A special file in an archive, by its type.
    static func words(for type: ArchiveError.SpecialType) -> String {
        switch type {
        case .characterDevice: "character device"
        case .blockDevice: "block device"
        case .fifo: "fifo"
        case .socket: "socket"
        case .unknown(let mode): "unknown file type 0o\(String(mode, radix: 8))"
        }
    }

    /// A file's type, as in "... is a FIFO (named pipe), not a regular file".
    static func words(for kind: FileStatus.Kind) -> String {
        switch kind {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .symlink: "a symbolic link"
        case .fifo: "a FIFO (named pipe)"
        case .socket: "a socket"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .unknown: "of an unknown type"
        }
    }

    /// A file the user named, as messages call it.
    static func words(for file: UserFile) -> String {
        switch file {
        case .keyFile: "key file"
        case .recoveryKit: "recovery kit"
        case .moveCodeFile: "move code file"
        case .excludeFile: "exclude file"
        case .filesFrom: "list of files"
        case .configFile: "config file"
        }
    }

    /// An item kind with its article ("a folder").
    static func words(for kind: ItemKind) -> String {
        switch kind {
        case .file: "a file"
        case .folder: "a folder"
        case .pack: "a backup pack"
        case .snapshot: "a snapshot"
        case .repack: "a backup repack"
        }
    }

    /// A broken precondition of VaultCore (a bug), as it always read.
    static func words(for misuse: Misuse) -> String {
        switch misuse {
        case .headerVersionNotWritten(let version): "header version \(version) is not written"
        case .keySlotCount: "a vault has 1 to \(KeySlot.maxSlots) key slots"
        case .entryFieldsOutOfRange: "manifest entry fields out of range"
        case .duplicateItemID: "duplicate item id"
        case .manifestVersion(let version): "manifest format version \(version)"
        case .itemHeaderFields: "item header fields out of shape"
        case .chunkOutOfRange(let index): "chunk \(index) out of range"
        case .masterKeyLength: "master key must be 32 bytes"
        case .fileKeyLength: "file key must be 32 bytes"
        case .notBackupStorage: "only backup packs and snapshots are replaced this way"
        case .mergeNotNewer: "a merged manifest must be newer"
        }
    }

    /// A broken precondition of VaultMove (a bug), as it always read.
    static func words(for misuse: MoveMisuse) -> String {
        switch misuse {
        case .codeAddressCount: "a move code holds 1 to \(MoveCode.maxAddresses) addresses"
        case .codeAddressLength: "bad address length in move code"
        case .codePortZero: "move code port 0"
        case .tokenLength: "move token must be \(MoveCode.tokenLength) bytes"
        case .codeKeyLength: "move code key must be \(MoveCode.keyFieldLength) bytes"
        case .frameAfterFinal: "move frame after the final frame"
        case .frameLength(let count): "move frame of \(count) bytes"
        case .frameCounterExhausted: "move frame counter exhausted"
        case .noStagedFile: "no staged file open"
        }
    }

    /// Why the receiver refused a moved vault.
    static func words(for refusal: MoveRefusal) -> String {
        switch refusal {
        case .targetExists: "its target directory already holds something"
        case .noSpace: "not enough free space"
        case .checkFailed: "the received vault failed its check"
        case .wrongPassword: "the password given there did not open the received vault"
        case .writeFailed: "it could not write the files"
        }
    }

    /// Why the unlock agent's directory is not private.
    static func words(for problem: AgentDirectoryProblem) -> String {
        switch problem {
        case .notADirectory: "it is not a directory"
        case .ownedBy(let uid): "it belongs to user \(uid)"
        case .openToOthers(let mode): "group or others may use it (mode \(String(mode, radix: 8)))"
        }
    }

    /// What rclone was asked to do ("the remote ... refused the list").
    static func words(for operation: RcloneOperation) -> String {
        switch operation {
        case .list: "list"
        case .read: "read"
        case .upload: "upload"
        case .download: "download"
        case .move: "move"
        case .delete: "delete"
        }
    }

    /// How rclone failed: its own words, else how it ended.
    static func words(for failure: RcloneFailure) -> String {
        switch failure {
        case .said(let line): line
        case .exited(let code): "rclone exited with status \(code)"
        case .signaled(let signal): "rclone was killed by signal \(signal)"
        }
    }

    /// What is wrong with what a remote sent ("remote data is corrupted or ...: ...").
    static func words(for damage: RemoteDamage) -> String {
        switch damage {
        case .impossibleSize: "the remote's header or manifest has an impossible size"
        case .headerImpossibleSize: "the remote's header has an impossible size"
        case .headerChecksum: "its vault.header is damaged (its checksum does not match)"
        case .notAVaultHeader: "the remote's header is not a vault header"
        case .headerDoesNotVerify: "the remote's header does not verify under this vault's key"
        case .manifestTooShort: "the remote's manifest is too short"
        case .notAManifest: "the remote's manifest does not start as a manifest does"
        case .manifestVersion(let version): "the remote's manifest has an unknown version \(version)"
        case .blobOnNeitherSide(let id): "the remote's manifest names a blob that is on neither side (\(id))"
        case .changedWhileDownloading(let path): "'\(path)' changed on the remote while it was being downloaded"
        case .answerTooLarge(let operation, let limit): "rclone's answer to \(words(for: operation)) is larger than \(limit) bytes"
        case .listingNotJSON: "rclone's listing is not the JSON it should be"
        case .tooManyFiles(let max): "the remote lists more than \(max) files: not a vault copy"
        case .negativeSize(let path): "a negative size for '\(path)'"
        case .remotesFileDamaged: "the vault's remotes file is damaged; remove it and add the remotes again"
        case .wrongAnswer(let path): "a range read of '\(path)' was answered with other bytes than asked for"
        case .thinFileDamaged: "the vault's thin file is damaged"
        case .notAsSent(let id): "blob \(id) was uploaded but is not there as it was sent"
        }
    }

    /// A parameter out of a crypto primitive's bounds (the Argon2id ones
    /// come from the user's --kdf-* options).
    static func words(for parameter: CryptoParameter) -> String {
        switch parameter {
        case .argon2Lanes(let lanes): "argon2 lanes \(lanes) not in 1...\(Argon2Parameters.maxLanes)"
        case .argon2Passes(let passes): "argon2 passes \(passes) not in 1...\(Argon2Parameters.maxPasses)"
        case .argon2Memory(let kib, let lanes): "argon2 memory \(kib) KiB not in \(8 * lanes)...\(Argon2Parameters.maxMemoryKiB)"
        case .argon2OutputLength(let length): "argon2 output length \(length)"
        case .argon2SaltShort: "argon2 salt shorter than 8 bytes"
        case .argon2LibsodiumShape: "libsodium Argon2id needs 1 lane, a 16-byte salt, no secret or associated data"
        case .hkdfOutputLength(let length): "HKDF output length \(length)"
        case .hpkeOutputLength(let length, let max): "HPKE output length \(length) not in 1...\(max)"
        case .hpkeIKMShort(let min): "HPKE DeriveKeyPair ikm shorter than \(min) bytes"
        case .hpkePSKUnpaired: "HPKE psk and psk_id must be given together"
        case .hpkePSKInBaseMode: "HPKE psk given in base mode"
        case .hpkePSKMissing: "HPKE psk mode needs a psk and psk_id"
        case .hpkePSKShort(let min): "HPKE psk shorter than \(min) bytes"
        case .hpkeExportOnly: "HPKE export-only context cannot seal or open"
        case .hpkeMessageLimit: "HPKE message limit reached"
        case .xofSqueeze: "squeeze on a fixed-length hash"
        case .cpaceScalarLength: "CPace scalar must be 32 bytes"
        case .ristrettoHashLength: "ristretto255 from_hash takes 64 bytes"
        case .mlkemSampleNTT: "ML-KEM SampleNTT did not finish"
        case .mlkemMatrixSize: "ML-KEM-768 matrix size"
        case .negativeSecretSize: "negative secret size"
        }
    }
}

extension Termination {
    /// "exited with status 1", "was killed by signal 9".
    var description: String {
        switch self {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "was killed by signal \(signal)"
        }
    }
}

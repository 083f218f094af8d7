// swift-tools-version:6.0
// The layers, bottom up: one system-library target per C library; System
// (the only code that calls libc); VaultCrypto (the only code that touches
// the crypto C modules: typed wrappers and standard constructions);
// ByteLayout (ByteReader/ByteWriter, the big-endian codec of every format);
// VaultCodecs (zstd and xz streams, pax archives, QR codes); VaultCore (file formats
// and vault operations; never prints, prompts or exits); VaultMove (the
// device move); the thin `vault` executable (the one terminal module).
// Fuzz targets and the constant-time check are a package of their own, in
// Fuzz/, so a release build here builds only what ships.
import PackageDescription

let package = Package(
    name: "vault",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "vault", targets: ["vault"]),
        .executable(name: "vault-bench", targets: ["VaultBench"]),
        // The libraries, as products only so that the package in Fuzz/ (fuzz
        // targets and the constant-time check, built by `make fuzz` and
        // `make ct`) can depend on them.
        .library(name: "System", targets: ["System"]),
        .library(name: "VaultCrypto", targets: ["VaultCrypto"]),
        .library(name: "VaultCodecs", targets: ["VaultCodecs"]),
        .library(name: "VaultCore", targets: ["VaultCore"]),
        .library(name: "VaultMove", targets: ["VaultMove"]),
        .library(name: "VaultRemote", targets: ["VaultRemote"]),
        .library(name: "VaultBackup", targets: ["VaultBackup"]),
        .library(name: "VaultConfig", targets: ["VaultConfig"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CGcrypt", pkgConfig: "libgcrypt", providers: [.apt(["libgcrypt20-dev"])]),
        .systemLibrary(name: "CLZMA", pkgConfig: "liblzma", providers: [.apt(["liblzma-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CFuse", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),

        // The syscall layer: the only code that calls libc for files,
        // processes, the terminal and sockets (CSystem holds what needs
        // _GNU_SOURCE or is a macro).
        .target(name: "CSystem"),
        // libcurl, loaded with dlopen when first needed (headers from
        // Debian's libcurl4-openssl-dev; see include/ccurl.h for why).
        .target(name: "CCurl"),
        // libipsec-mb's AES-256-GCM, loaded with dlopen where it is the faster
        // code (header from Debian's libipsec-mb-dev, amd64 only; see
        // include/cipsecmb.h).
        .target(name: "CIPSecMB"),
        .target(name: "System", dependencies: ["CSystem"]),
        // Byte layouts: ByteReader/ByteWriter, the one big-endian codec every
        // format uses (headers, manifests, envelopes, move frames, agent
        // requests). A target of its own, with no dependencies, rather than a
        // part of System: it calls no libc. VaultCrypto does not depend on it
        // (HPKE's sequence number is laid out by hand in its pointer code).
        .target(name: "ByteLayout"),

        .target(name: "VaultCrypto", dependencies: ["CSodium", "CArgon2", "COpenSSL", "CGcrypt", "CIPSecMB"]),
        // Compression (libzstd, liblzma), folder archives (libarchive) and QR
        // codes (libqrencode): bytes in, bytes out.
        .target(name: "VaultCodecs", dependencies: ["CZstd", "CLZMA", "CArchive", "CQREncode", "System"]),
        .target(name: "VaultCore", dependencies: ["ByteLayout", "VaultCrypto", "VaultCodecs", "System"]),
        // Device move: the only networking, above the vault it moves.
        .target(name: "VaultMove", dependencies: ["ByteLayout", "VaultCore", "VaultCrypto", "VaultCodecs", "System"]),
        // Off-site copies: drives rclone as a subprocess (push, pull, clone,
        // remote drop-ins), above the vault it copies; and a thin vault's
        // range reads (libcurl, to one `rclone serve http` per command).
        .target(name: "VaultRemote", dependencies: ["ByteLayout", "VaultCore", "VaultCrypto", "VaultBackup", "System", "CCurl"]),
        // `vault backup` and its snapshots: chunking, packs, trees, the host's
        // cache, restore; above the vault whose drop-ins and items it uses.
        .target(name: "VaultBackup", dependencies: ["ByteLayout", "VaultCore", "VaultCrypto", "VaultCodecs", "System"]),
        // `vault mount`: the vault as a read-only FUSE 3 file system, the only libfuse caller.
        .target(name: "VaultMount", dependencies: ["CFuse", "VaultCore", "VaultCodecs", "VaultBackup"]),
        // The unlock agent: a per-user process holding one vault's master key,
        // serving this user's commands over a Unix socket.
        .target(name: "VaultAgent", dependencies: ["ByteLayout", "VaultCore", "VaultCrypto", "System"]),
        // The user's config file (profiles of backups that run themselves):
        // YAML through libyaml, checked into typed profiles; no I/O but reading it.
        .target(name: "VaultConfig", dependencies: ["CYAML"]),
        .executableTarget(name: "vault", dependencies: ["VaultCore", "VaultMove", "VaultRemote", "VaultMount", "VaultAgent", "VaultBackup", "VaultConfig",
                                                       "VaultCrypto", "System"]),
        // Measurements for `make bench`; not installed.
        .executableTarget(name: "VaultBench", dependencies: ["VaultCore", "VaultMove", "VaultCrypto", "System"]),

        .testTarget(name: "ByteLayoutTests", dependencies: ["ByteLayout"]),
        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto", "COpenSSL"],   // OpenSSL: the AEADs' differential oracle
                    resources: [.copy("Vectors")]),
        .testTarget(name: "VaultCodecsTests", dependencies: ["VaultCodecs", "System", "TestSupport"]),
        // What several test targets share (test targets cannot import each
        // other): FORMAT.md's published vectors, the schedules' SplitMix.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SystemTests", dependencies: ["System"]),
        .testTarget(name: "VaultCoreTests", dependencies: ["VaultCore", "VaultCrypto", "System", "TestSupport"]),
        .testTarget(name: "VaultMoveTests", dependencies: ["VaultMove", "VaultCore", "VaultCrypto", "System", "TestSupport"]),
        .testTarget(name: "VaultAgentTests", dependencies: ["VaultAgent", "VaultCore", "VaultCrypto", "System"]),
        .testTarget(name: "VaultConfigTests", dependencies: ["VaultConfig"]),
        .testTarget(name: "VaultMountTests", dependencies: ["VaultMount", "VaultBackup", "VaultCore", "VaultCodecs", "System"]),
        .testTarget(name: "VaultBackupTests", dependencies: ["VaultBackup", "VaultCore", "VaultCrypto", "VaultCodecs", "ByteLayout", "System",
                                                             "TestSupport"]),
        .testTarget(name: "VaultRemoteTests", dependencies: ["VaultRemote", "VaultCore", "System", "TestSupport"]),
        .testTarget(name: "VaultCLITests", dependencies: ["VaultCore", "VaultMove", "VaultRemote", "VaultAgent", "VaultBackup", "VaultCrypto",
                                                          "VaultCodecs", "System", "TestSupport"]),
    ]
)

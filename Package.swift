// swift-tools-version:6.0
// The layers, bottom up: one system-library target per C library; VaultCrypto
// (the only code that touches the crypto C modules: typed wrappers and
// standard constructions); VaultCodecs (the liblzma and libarchive wrappers:
// xz streams and pax archives); VaultCore (file formats and vault operations; never prints,
// prompts or exits); the thin `vault` executable (the one terminal module).
import PackageDescription

let package = Package(
    name: "vault",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "vault", targets: ["vault"]),
        .executable(name: "vault-bench", targets: ["VaultBench"]),
        .executable(name: "fuzz-item", targets: ["FuzzItem"]),
        .executable(name: "fuzz-header", targets: ["FuzzHeader"]),
        .executable(name: "fuzz-manifest", targets: ["FuzzManifest"]),
        .executable(name: "fuzz-envelope", targets: ["FuzzEnvelope"]),
        .executable(name: "fuzz-archive", targets: ["FuzzArchive"]),
        .executable(name: "fuzz-move-frame", targets: ["FuzzMoveFrame"]),
        .executable(name: "fuzz-move-code", targets: ["FuzzMoveCode"]),
        .executable(name: "fuzz-xz", targets: ["FuzzXZ"]),
        .executable(name: "fuzz-mlkem", targets: ["FuzzMLKEM"]),
        .executable(name: "ct-mlkem", targets: ["CTMLKEM"]),
        .executable(name: "fuzz-hpke-xwing", targets: ["FuzzHPKEXWing"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLZMA", pkgConfig: "liblzma", providers: [.apt(["liblzma-dev"])]),
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),

        // The syscall layer: the only code that calls libc for files,
        // processes, the terminal and sockets (CSystem holds what needs
        // _GNU_SOURCE or is a macro).
        .target(name: "CSystem"),
        .target(name: "System", dependencies: ["CSystem"]),

        .target(name: "VaultCrypto", dependencies: ["CSodium", "CArgon2", "COpenSSL"]),
        // Compression (liblzma), folder archives (libarchive) and QR codes
        // (libqrencode): bytes in, bytes out.
        .target(name: "VaultCodecs", dependencies: ["CLZMA", "CArchive", "CQREncode", "System"]),
        .target(name: "VaultCore", dependencies: ["VaultCrypto", "VaultCodecs", "System"]),
        // Device move: the only networking, above the vault it moves.
        .target(name: "VaultMove", dependencies: ["VaultCore", "VaultCrypto", "VaultCodecs", "System"]),
        .executableTarget(name: "vault", dependencies: ["VaultCore", "VaultMove", "VaultCrypto", "System"]),
        // Measurements for `make bench`; not installed.
        .executableTarget(name: "VaultBench", dependencies: ["VaultCore", "VaultCrypto", "System"]),
        // libFuzzer entry points; built only by `make fuzz` (see Makefile).
        .executableTarget(name: "FuzzItem", dependencies: ["VaultCore", "VaultCrypto"], path: "Fuzz/FuzzItem"),
        .executableTarget(name: "FuzzHeader", dependencies: ["VaultCore"], path: "Fuzz/FuzzHeader"),
        .executableTarget(name: "FuzzManifest", dependencies: ["VaultCore", "VaultCrypto"], path: "Fuzz/FuzzManifest"),
        .executableTarget(name: "FuzzEnvelope", dependencies: ["VaultCore", "VaultCrypto"], path: "Fuzz/FuzzEnvelope"),
        .executableTarget(name: "FuzzArchive", dependencies: ["VaultCodecs"], path: "Fuzz/FuzzArchive"),
        .executableTarget(name: "FuzzMoveFrame", dependencies: ["VaultCore", "VaultMove", "VaultCrypto"], path: "Fuzz/FuzzMoveFrame"),
        .executableTarget(name: "FuzzMoveCode", dependencies: ["VaultCore", "VaultMove", "VaultCrypto"], path: "Fuzz/FuzzMoveCode"),
        .executableTarget(name: "FuzzXZ", dependencies: ["VaultCodecs"], path: "Fuzz/FuzzXZ"),
        .executableTarget(name: "FuzzMLKEM", dependencies: ["VaultCrypto"], path: "Fuzz/FuzzMLKEM"),
        .executableTarget(name: "FuzzHPKEXWing", dependencies: ["VaultCrypto"], path: "Fuzz/FuzzHPKEXWing"),

        // Constant-time check under valgrind (ctgrind); built and run only by `make ct`.
        .target(name: "CValgrind", path: "CT/CValgrind"),
        .executableTarget(name: "CTMLKEM", dependencies: ["VaultCrypto", "CValgrind"], path: "CT/CTMLKEM"),

        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto"],
                    resources: [.copy("Vectors")]),
        .testTarget(name: "VaultCodecsTests", dependencies: ["VaultCodecs", "System"]),
        .testTarget(name: "VaultCoreTests", dependencies: ["VaultCore", "VaultMove", "VaultCrypto", "System"]),
        .testTarget(name: "VaultCLITests", dependencies: ["VaultCore", "VaultMove", "VaultCrypto", "VaultCodecs", "System"]),
    ]
)

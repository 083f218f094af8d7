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
        // The libraries, as products only so that the fuzz package (Fuzz/,
        // a separate package built by `make fuzz`) can depend on them.
        .library(name: "VaultCrypto", targets: ["VaultCrypto"]),
        .library(name: "VaultCodecs", targets: ["VaultCodecs"]),
        .library(name: "VaultCore", targets: ["VaultCore"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLZMA", pkgConfig: "liblzma", providers: [.apt(["liblzma-dev"])]),
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),

        .target(name: "VaultCrypto", dependencies: ["CSodium", "CArgon2", "COpenSSL"]),
        // Compression (liblzma), folder archives (libarchive) and QR codes
        // (libqrencode): bytes in, bytes out.
        .target(name: "VaultCodecs", dependencies: ["CLZMA", "CArchive", "CQREncode"]),
        .target(name: "VaultCore", dependencies: ["VaultCrypto", "VaultCodecs"]),
        .executableTarget(name: "vault", dependencies: ["VaultCore", "VaultCrypto"]),
        // Measurements for `make bench`; not installed.
        .executableTarget(name: "VaultBench", dependencies: ["VaultCore", "VaultCrypto"]),

        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto"],
                    resources: [.copy("Vectors")]),
        .testTarget(name: "VaultCodecsTests", dependencies: ["VaultCodecs"]),
        .testTarget(name: "VaultCoreTests", dependencies: ["VaultCore", "VaultCrypto"]),
        .testTarget(name: "VaultCLITests", dependencies: ["VaultCore", "VaultCrypto", "VaultCodecs"]),
    ]
)

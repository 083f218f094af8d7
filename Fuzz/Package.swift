// swift-tools-version:6.0
// The libFuzzer targets and the constant-time check, a package of their own
// so the main package has no such products: `swift build -c release` there
// builds only what ships, and `swift test` there never compiles them. The
// fuzz targets are built only by `make fuzz`, in debug, with the sanitizer
// and coverage flags of TOOLCHAIN.md; ct-mlkem only by `make ct` (release,
// -enable-testing, run under valgrind).
//
// Several targets use `@testable import VaultCore` (and VaultCodecs) to reach
// internals they must drive: ItemCipher.nonce/aad to seal their own chunks,
// Manifest.parse and its capacity, DropInEnvelope.info, PaxWriter. That
// needs those modules compiled with -enable-testing. A debug build of this
// package already passes it to every module of the build graph, the
// dependency package's included (checked with Swift 6.3.1: the llbuild
// manifest, .build/fuzz/debug.yaml, has -enable-testing for VaultCore and
// VaultCrypto); `make fuzz` passes `-Xswiftc -enable-testing` as well, so
// it does not rest on that default. So nothing in VaultCore was made
// public, or `package`, for fuzzing. `make fuzz` also passes -O: the
// targets stay a debug build (assertions, sanitizers, coverage) but run
// about ten times faster; `precondition` drops its message under -O, so the
// new targets trap through `fatalError` (their `require`), which keeps it.
//
// The dependency is named explicitly: a path dependency's identity is
// otherwise its directory's name, which differs between checkouts.
import PackageDescription

let vault: [Target.Dependency] = [
    .product(name: "VaultCore", package: "vault"),
    .product(name: "VaultCrypto", package: "vault"),
    .product(name: "VaultCodecs", package: "vault"),
    .product(name: "VaultMove", package: "vault"),
    .product(name: "VaultRemote", package: "vault"),
    .product(name: "VaultBackup", package: "vault"),
]

/// (product name, target name = directory)
let targets = [
    ("fuzz-item", "FuzzItem"),
    ("fuzz-header", "FuzzHeader"),
    ("fuzz-manifest", "FuzzManifest"),
    ("fuzz-envelope", "FuzzEnvelope"),
    ("fuzz-archive", "FuzzArchive"),
    ("fuzz-move-frame", "FuzzMoveFrame"),
    ("fuzz-move-code", "FuzzMoveCode"),
    ("fuzz-move-handshake", "FuzzMoveHandshake"),
    ("fuzz-xz", "FuzzXZ"),
    ("fuzz-zstd", "FuzzZstd"),
    ("fuzz-item-sealed", "FuzzItemSealed"),
    ("fuzz-absorb", "FuzzAbsorb"),
    ("fuzz-kit", "FuzzKit"),
    ("fuzz-manifest-entries", "FuzzManifestEntries"),
    ("fuzz-mlkem", "FuzzMLKEM"),
    ("fuzz-hpke-xwing", "FuzzHPKEXWing"),
    ("fuzz-listing", "FuzzListing"),
    ("fuzz-backup-tree", "FuzzBackupTree"),
    ("fuzz-folder-index", "FuzzFolderIndex"),
]

let package = Package(
    name: "vault-fuzz",
    platforms: [.macOS(.v13)],
    products: targets.map { .executable(name: $0.0, targets: [$0.1]) }
        + [.executable(name: "ct-mlkem", targets: ["CTMLKEM"])],
    dependencies: [.package(name: "vault", path: "..")],
    targets: targets.map { .executableTarget(name: $0.1, dependencies: vault, path: $0.1) } + [
        // Constant time under valgrind (ctgrind): ML-KEM-768 and X-Wing with
        // their secrets marked undefined.
        .target(name: "CValgrind", path: "CT/CValgrind"),
        .executableTarget(name: "CTMLKEM", dependencies: vault + ["CValgrind"], path: "CT/CTMLKEM"),
    ]
)

// libFuzzer target: folder index files past the GCM tag
// (FolderIndexFile.open). Only the owner can seal one, but the reader must
// hold against any plaintext, so this target seals its input as the
// plaintext under a master key it holds and opens it for a folder item of
// `fileCount` files. Built by `make fuzz`.
//
// Input: fileCount (1) || plaintext.
// Traps on: an index that opens holding what the format forbids (a file's
// data not at a 512-byte block of at least 512, or past 2^64; data or a
// link target on another kind; permissions past 0777; a path not in the
// "/a/b" form), a tree that does not give each entry back at its path, a
// file count other than the item's, or an opened index that does not seal
// and open again to the same entries.
@testable import VaultCore
import VaultCodecs
import VaultCrypto

/// `precondition` whose message survives the -O fuzz build (which drops it).
private func require(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { fatalError(message()) } }

private let vaultID = [UInt8](repeating: 0x40, count: 16)
private let keys = try! FolderIndexKeys(master: MasterKey(secret: SecretBytes(count: MasterKey.length)), vaultID: vaultID)
// libFuzzer calls the target from one thread only.
nonisolated(unsafe) private let aead = try! FolderIndexFile.aead(keys)

private func item(files: UInt64) -> ManifestEntry {
    try! ManifestEntry(itemID: [UInt8](repeating: 0x80, count: 16), fileKey: FileKey(secret: SecretBytes(count: FileKey.length)),
                       kind: .folder, origin: .droppedIn, mode: 0o755, size: 0, fileCount: files,
                       added: 0, modified: 0, name: "folder")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFolderIndex(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 1 else { return 0 }
    let entry = item(files: UInt64(input[0]))
    let name = try! FolderIndexFile.name(item: entry, keys: keys)
    let nonce = [UInt8](repeating: 0x60, count: AEADAlgorithm.nonceLength)
    let file = FolderIndexFile.magic + nonce
        + (try! aead.seal(nonce: nonce, aad: FolderIndexFile.aad(vaultID, name), plaintext: Array(input[1...])))
    guard let index = try? FolderIndexFile.open(file, item: entry, name: name, keys: keys, vaultID: vaultID) else { return 0 }

    require(UInt64(index.entries.filter { $0.kind == .file }.count) == entry.fileCount, "a file count other than the item's")
    for e in index.entries {
        require(e.path.first == UInt8(ascii: "/") && !e.path.dropFirst().isEmpty, "a path not in the /a/b form")
        require(e.permissions <= 0o777, "permissions past 0777")
        switch e.kind {
        case .file:
            require(e.dataOffset >= 512 && e.dataOffset % 512 == 0 && e.dataOffset <= UInt64.max - e.size, "file data off its blocks")
            require(e.linkTarget.isEmpty, "a link target on a file")
        case .directory:
            require(e.size == 0 && e.dataOffset == 0 && e.linkTarget.isEmpty, "a directory with data")
        case .symlink:
            require(e.size == 0 && e.dataOffset == 0, "a symbolic link with data")
        }
        // The tree gives the entry back at its path.
        var node = PathTree.root
        for part in e.path.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            require(!part.isEmpty && !part.elementsEqual(".".utf8) && !part.elementsEqual("..".utf8), "a path component . .. or empty")
            guard let next = index.tree.child(node, part) else { fatalError("an entry the tree does not hold") }
            node = next
        }
        require(index.entry(at: node)?.path == e.path, "the tree gives another entry at a path")
    }
    // Sealed again (a fresh nonce), it opens to the same entries.
    guard let again = try? FolderIndexFile.seal(index, name: name, keys: keys, vaultID: vaultID) else {
        fatalError("an opened index does not seal")
    }
    guard let reopened = try? FolderIndexFile.open(again, item: entry, name: name, keys: keys, vaultID: vaultID) else {
        fatalError("an index sealed again does not open")
    }
    require(index.entries == reopened.entries, "an index sealed again opens to other entries")
    return 0
}

import VaultCodecs
import VaultCrypto

// A dropped folder index (docs/FORMAT.md, "Dropped folder indexes"): the
// index of a folder drop-in, written by `vault add` beside its content as
// `inbox/<content stem>.fx`. The dropper knows where each file's data
// starts as it writes the archive (FolderArchive.write(indexing:)), so the
// owner's first mount (or `get FOLDER/FILE`) need not decrypt the whole
// archive to find out (issue 45: 28-30 ms of a 115 MiB folder's first
// `cp -r`; a whole fetch from a thin vault's remote).
//
//   "VAULTDX1" (8) || nonce (12) || AES-256-GCM(key, nonce, aad, plaintext)
//   aad       = "VAULTDX1" || item id (16)
//   key       = HKDF-SHA256(ikm = file key, salt = item id, info = "vault v1 dropped folder index", 32)
//   plaintext = as a folder index file's (FolderIndexFile.swift)
//
// The dropper has no key of the vault's, only the item's own file key,
// which the envelope carries: so only the owner, once the envelope opens,
// can read it. Absorb opens it, checks it as it checks a kept index (and
// it is hostile: the dropper chose every byte), and keeps it as
// `indexes/<name>` under the vault's own folder index key. An index that
// does not open or check is dropped: the first mount makes the pass.
//
// What it can say is what the dropper's archive could: which bytes of its
// own item are which file. A lying index shows a mount other bytes of the
// same item than a restore extracts, never another item's (its offsets
// index this item's stream; reads past its end fail).
enum DroppedFolderIndex {
    static let magic = Array("VAULTDX1".utf8)
    static let label = Array("vault v1 dropped folder index".utf8)

    /// Whether a folder's index is worth writing as it is made (by its
    /// dropper, or the owner's save of a version): when its files reach
    /// past the archive's first chunk. Below that, keeping it costs what
    /// the pass it saves does: 500 folders of two small files each took
    /// 0.05 s to absorb, and 0.20-0.23 s keeping an index each (a file
    /// read, opened, checked, sealed again and renamed into place, ~0.3
    /// ms); their add took 0.29-0.34 s instead of 0.22-0.25 s. A pass over
    /// one chunk decrypts 1 MiB (~0.2 ms).
    static func isWorthKeeping(_ entries: [FolderIndex.Entry]) -> Bool {
        let limit = UInt64(ItemCipher.chunkSize)
        return entries.contains { $0.size > limit || $0.dataOffset > limit - $0.size }
    }

    static func aead(fileKey: FileKey, itemID: [UInt8]) throws -> AEAD {
        try AEAD(.aes256GCM, key: HKDF.deriveKey(ikm: fileKey.secret, salt: itemID, info: label, length: 32))
    }

    /// The file for `index`, the folder `itemID` sealed under `fileKey`;
    /// nil if it would be over FolderIndexFile.maxLength (none is written).
    static func seal(_ index: FolderIndex, fileKey: FileKey, itemID: [UInt8],
                     nonce: [UInt8] = SecureRandom.bytes(AEADAlgorithm.nonceLength)) throws -> [UInt8]? {
        try FolderIndexFile.seal(index, magic: magic, aead: aead(fileKey: fileKey, itemID: itemID),
                                 aad: magic + itemID, nonce: nonce)
    }

    /// Opens a dropped index of `item` (an entry its envelope gave) by a
    /// kept index's rules; anything else is `corruptedOrTampered`.
    static func open(_ bytes: [UInt8], item: ManifestEntry) throws -> FolderIndex {
        try FolderIndexFile.open(bytes, magic: magic, aead: aead(fileKey: item.fileKey, itemID: item.itemID),
                                 aad: magic + item.itemID, item: item)
    }
}

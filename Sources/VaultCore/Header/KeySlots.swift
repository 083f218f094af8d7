import System
import VaultCrypto

// Changing key slots (docs/FORMAT.md, "Vault header, version 2"): every
// change writes a whole new header of the current version (3), so the first
// change to a version-1 or version-2 vault upgrades it (its one password becomes the slot
// "password", and the header gains the X-Wing key). The new header goes to a
// temp file, is read back, and must unlock to this vault's master key
// through the slot just written before it replaces the old one: a crash
// leaves the old header or the new, and the writer never saves a header the
// reader refuses.

extension KeySlot {
    /// The slot `init` makes, and the name a version-1 header's password has.
    public static let defaultName = "password"
}

/// What opens a slot being written or checked.
public enum SlotCredential: Sendable {
    case password(Password, Argon2Parameters)
    case keyFile(KeyFileSecret)
}

extension UnlockedVault {
    /// Re-wraps the master key under a new password in slot `slot` (default:
    /// the slot this unlock used, else the first password slot), with `kdf`
    /// or the slot's own cost. Nothing else changes; no item is re-encrypted.
    public func changePassword(to password: Password, slot: String? = nil, kdf: Argon2Parameters? = nil) throws {
        let header = vault.header
        let passwordSlots = try header.passwordSlots()
        if slot == nil, passwordSlots.isEmpty {
            // Only key-file slots (a kit recovery, say): the password gets a slot of its own.
            let name = header.slot(named: KeySlot.defaultName) == nil ? KeySlot.defaultName : "recovered"
            return try addSlot(name: name, credential: .password(password, kdf ?? KDFCalibration.minimum))
        }
        let name = slot ?? unlockedSlot.flatMap { n in passwordSlots.contains { $0.name == n } ? n : nil }
            ?? passwordSlots.first?.name ?? KeySlot.defaultName
        guard let old = header.slot(named: name) else { throw VaultError.noSuchKeySlot(name: name) }
        guard case .password(let oldKDF, _) = old.kind else {
            throw VaultError.notAPasswordSlot(name: name, kind: old.kind)
        }
        try writeSlot(name: name, credential: .password(password, kdf ?? oldKDF), replacing: true, created: old.created)
    }

    /// Adds a slot `name` opened by `credential`. At most 8; names unique.
    public func addSlot(name: String, credential: SlotCredential) throws {
        try KeySlot.checkName(name)
        guard vault.header.slot(named: name) == nil else { throw VaultError.keySlotExists(name: name) }
        guard vault.header.slots.count < KeySlot.maxSlots else {
            throw VaultError.tooManyKeySlots
        }
        try writeSlot(name: name, credential: credential, replacing: false, created: Syscall.now())
    }

    /// Removes slot `name`; never the last slot that can open the vault.
    public func removeSlot(name: String) throws {
        try requireLock()
        let header = vault.header
        guard header.slot(named: name) != nil else { throw VaultError.noSuchKeySlot(name: name) }
        let rest = try currentSlotsForVersion2().filter { $0.name != name }
        guard rest.contains(where: { if case .other = $0.kind { false } else { true } }) else {
            throw VaultError.lastKeySlot(name: name)
        }
        let newHeader = try header.replacingSlots(rest, masterKey: keys.master)
        try replaceHeader(with: newHeader) { _ in
            guard let s = newHeader.slots.first else { throw VaultError.corruptedOrTampered }
            return s
        }
    }

    private func writeSlot(name: String, credential: SlotCredential, replacing: Bool, created: Int64) throws {
        try requireLock()
        let header = vault.header
        let salt = SecureRandom.bytes(KeySlot.saltLength)
        let (kind, kek) = try Self.kek(for: credential, salt: salt)
        let slot = try KeySlot.seal(name: name, kind: kind, created: created, kek: kek, masterKey: keys.master,
                                    vaultID: header.vaultID)
        var slots = replacing && header.version == 1 ? header.slots : try currentSlotsForVersion2()
        if replacing, let i = slots.firstIndex(where: { $0.name == name }) { slots[i] = slot } else { slots.append(slot) }
        let newHeader = try header.replacingSlots(slots, masterKey: keys.master)
        try replaceHeader(with: newHeader) { readBack in
            guard let s = readBack.slot(named: name) else { throw VaultError.corruptedOrTampered }
            let salt: [UInt8]
            switch s.kind {
            case .password(_, let sl), .keyFile(let sl): salt = sl
            case .other: throw VaultError.corruptedOrTampered
            }
            guard try readBack.unlock(slot: s, kek: Self.kek(for: credential, salt: salt).1).secret == keys.master.secret else {
                throw VaultError.corruptedOrTampered
            }
            return s
        }
    }

    /// The header's slots as they must be in a version-2 header. A version-1
    /// header's password was wrapped with that version's AAD, so it is
    /// wrapped again (same salt and cost, so the same KEK: the one this
    /// unlock derived). After a kit unlock there is none: the password must
    /// be given.
    func currentSlotsForVersion2() throws -> [KeySlot] {
        let header = vault.header
        guard header.version == 1 else { return header.slots }
        guard let old = header.slots.first, let kek = slotKEK, unlockedSlot == old.name else {
            throw VaultError.version1NeedsPassword
        }
        return [try KeySlot.seal(name: old.name, kind: old.kind, created: Syscall.now(), kek: kek, masterKey: keys.master,
                                 vaultID: header.vaultID)]
    }

    static func kek(for credential: SlotCredential, salt: [UInt8]) throws -> (KeySlot.Kind, KeyEncryptionKey) {
        switch credential {
        case .password(let password, let kdf):
            try VaultHeader.checkBounds(kdf)
            return (.password(kdf, salt: salt), try KeyEncryptionKey.derive(password: password.secret, salt: salt, parameters: kdf))
        case .keyFile(let file):
            return (.keyFile(salt: salt), try file.kek(salt: salt))
        }
    }

    /// Writes `header` beside the old one, reads it back, has `check` prove
    /// a slot of it opens to this vault's master key, then renames it into
    /// place and takes it as this vault's header.
    func replaceHeader(with header: VaultHeader, check: (VaultHeader) throws -> KeySlot) throws {
        let temp = try TempFile(beside: paths.header, mode: Vault.headerMode(paths))
        try header.bytes.withUnsafeBytes { try temp.file.write($0) }
        try temp.file.sync()
        let readBack = try VaultHeader(parsing: VaultDirectory.readFile(temp.path, limit: VaultHeader.maxLength + 1))
        _ = try check(readBack)
        try readBack.verify(masterKey: keys.master)
        try temp.commit(to: paths.header)
        vault = try Vault(at: paths.root)
        rollbackGuard?.saw(vaultID: vaultID, headerCounter: vault.header.counter)
    }

    /// Rewrites an older header as the current version: `vault upgrade`.
    /// A version-1 header's password becomes slot "password" (wrapped anew,
    /// so the password is needed) and the header gains the X-Wing key. A
    /// version-2 header's slots are kept byte for byte (their wrap AAD is
    /// the same in version 3): only the version, MAC and checksum change.
    public func upgradeHeader(password: Password) throws {
        switch vault.header.version {
        case 1:
            try changePassword(to: password, slot: KeySlot.defaultName)
        case let v where v < VaultHeader.currentVersion:
            try requireLock()
            let newHeader = try vault.header.replacingSlots(vault.header.slots, masterKey: keys.master)
            try replaceHeader(with: newHeader) { readBack in
                guard readBack.version == VaultHeader.currentVersion, readBack.slots == vault.header.slots,
                      let s = readBack.slots.first else { throw VaultError.corruptedOrTampered }
                return s
            }
        default:
            return
        }
    }
}

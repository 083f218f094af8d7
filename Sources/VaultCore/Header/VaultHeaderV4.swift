// Vault header version 4 (docs/FORMAT.md, "Vault header, version 4"):
//
//   magic "VAULTHDR" (8) || version 0x04 || vault id (16) || options u16be
//   || kem id u16be || X-Wing public key (1216) || slot count u8 || slots
//   || header counter u64be || header MAC (32) || checksum (32)
//
// Version 3 with a counter under the MAC: every header written replaces one
// with the counter one higher (`replacingSlots`), and a version-1 to -3
// header counts as 0. The counter orders headers the way the manifest's
// generation orders manifests. A remote, a copy or another machine can
// serve an older header that still verifies under the master key (one
// with a password since changed, or a slot since removed), but it cannot
// make an older header look newer: the MAC covers the counter. So a pull
// takes a header only if its authenticated counter is above ours, and push
// and pull together replace only the side that changed since they were
// last in step (SyncPlan).
//
// Parsing and sealing are version 3's code (VaultHeaderV2/V3.swift), with
// the 8 counter bytes between the slots and the MAC.

extension VaultHeader {
    static let counterLength = 8
}

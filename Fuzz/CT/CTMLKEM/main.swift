// ct-mlkem: runs ML-KEM-768 and X-Wing key generation, encapsulation and
// decapsulation with every secret input marked undefined for valgrind's
// memcheck (the ctgrind technique, CT/CValgrind/include/ctgrind.h). Public
// outputs (ek, ciphertexts) are marked defined again before anything
// compares or prints them. `make ct` builds it (-O, plus -enable-testing for
// the deterministic internal entry points) and runs it under valgrind;
// scripts/ct.sh reads the report.
import CValgrind
import Foundation
@testable import VaultCrypto

func secret(_ s: SecretBytes) { s.withUnsafeBytes { if let p = $0.baseAddress { vault_ct_secret(p, $0.count) } } }
func secret(_ s: SecretBytes, _ range: Range<Int>) {
    s.withUnsafeBytes { if let p = $0.baseAddress { vault_ct_secret(p + range.lowerBound, range.count) } }
}
func declassify(_ b: [UInt8]) { b.withUnsafeBytes { if let p = $0.baseAddress { vault_ct_public(p, $0.count) } } }
func declassify(_ s: SecretBytes) { s.withUnsafeBytes { if let p = $0.baseAddress { vault_ct_public(p, $0.count) } } }
func say(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

guard vault_ct_available() == 1 else {
    say("ct-mlkem: built without valgrind/memcheck.h (apt-get install valgrind); nothing checked")
    exit(2)
}
guard vault_ct_running_on_valgrind() == 1 else {
    say("ct-mlkem: run me under valgrind (make ct)")
    exit(2)
}

// rho = G(d || k)[0:32] is public by design; the library declassifies it through this hook.
ConstantTime.declassifyHook = { b in if let p = b.baseAddress { vault_ct_public(p, b.count) } }

// --self-test: a table lookup indexed by a marked byte, which memcheck must
// report; scripts/ct.sh runs this first so a silent harness cannot pass.
if CommandLine.arguments.dropFirst().first == "--self-test" {
    let probe = try SecretBytes.random(count: 1)
    secret(probe)
    let table = (0...255).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let before = vault_ct_error_count()
    let looked = table.withUnsafeBufferPointer { t in probe.withUnsafeBytes { t[Int($0[0])] } }
    var out = [looked]
    declassify(out)
    out[0] = out[0] | 1
    let reported = vault_ct_error_count() - before
    print("ct-mlkem self-test: a secret-indexed load gave \(reported) memcheck report(s) (\(out[0] & 1))")
    exit(reported > 0 ? 0 : 1)
}

let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 3
let baseline = vault_ct_error_count()
for round in 0..<rounds {
    // ML-KEM-768 KeyGen_internal: d and z secret. ek is public.
    let d = try SecretBytes.random(count: 32), z = try SecretBytes.random(count: 32)
    secret(d); secret(z)
    let generated = try MLKEM768.generateKeyPair(d: d, z: z)
    declassify(generated.encapsulationKey.bytes)
    declassify(generated.encapsulationKey.hash)
    // The stored dk: its ek and H(ek) are public, dk_PKE (s) and z secret.
    let dkBytes = try generated.secret.withUnsafeBytes { try SecretBytes(copying: $0) }
    declassify(dkBytes)
    let dk = try MLKEM768.DecapsulationKey(secret: dkBytes)
    secret(dkBytes, 0..<1152)
    secret(dkBytes, 2336..<2368)

    // Encaps_internal: m secret; c public, K secret.
    let m = try SecretBytes.random(count: 32)
    secret(m)
    let (c, k) = try MLKEM768.encapsulate(to: dk.encapsulationKey, randomness: m)
    declassify(c)

    // Decaps_internal on the valid ciphertext and on a modified one
    // (implicit rejection): both must take the same path.
    let k1 = try MLKEM768.decapsulate(c, with: dk)
    var modified = c
    modified[round * 97 % c.count] ^= 0x10
    let k2 = try MLKEM768.decapsulate(modified, with: dk)

    // X-Wing: the seed and eseed secret; pk and ct public.
    let seed = try SecretBytes.random(count: 32)
    secret(seed)
    let xsk = try XWing.PrivateKey(seed: seed)
    declassify(xsk.publicKey.bytes)
    declassify(xsk.publicKey.mlkem.bytes)
    declassify(xsk.publicKey.mlkem.hash)
    declassify(xsk.publicKey.x25519.bytes)
    let eseed = try SecretBytes.random(count: 64)
    secret(eseed)
    let (xct, xss) = try XWing.encapsulate(to: xsk.publicKey, eseed: eseed)
    declassify(xct)
    let xss1 = try XWing.decapsulate(xct, with: xsk)
    var xmodified = xct
    xmodified[1100] ^= 0x01
    _ = try XWing.decapsulate(xmodified, with: xsk)

    // Only now, with everything declassified, compare the results.
    for s in [k, k1, k2, xss, xss1] { declassify(s) }
    guard k == k1, k != k2, xss == xss1 else {
        say("ct-mlkem: round \(round): results do not match")
        exit(1)
    }
}
let errors = vault_ct_error_count() - baseline
print("ct-mlkem: \(rounds) rounds of ML-KEM-768 and X-Wing keygen/encaps/decaps (valid and modified ciphertexts), \(errors) memcheck errors")
exit(errors == 0 ? 0 : 1)

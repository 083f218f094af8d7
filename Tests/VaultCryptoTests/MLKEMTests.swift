import Testing
@testable import VaultCrypto

/// The ML-KEM-768 cases of NIST's ACVP server (Vectors/mlkem768-fips203.json;
/// see its `source` field): 25 keyGen, 25 encapsulation, 10 decapsulation
/// (5 of them implicit rejection), 10 + 10 key checks.
struct MLKEMVectors: Decodable, Sendable {
    struct Group<T: Decodable & Sendable>: Decodable, Sendable { let tests: [T] }
    struct KeyGen: Decodable, Sendable { let tcId: Int; let d, z, ek, dk: Hex }
    struct Encapsulation: Decodable, Sendable { let tcId: Int; let ek, m, c, k, dk: Hex }
    struct Decapsulation: Decodable, Sendable { let tcId: Int; let reason: String; let dk, c, k: Hex }
    struct EKCheck: Decodable, Sendable { let tcId: Int; let testPassed: Bool; let ek: Hex }
    struct DKCheck: Decodable, Sendable { let tcId: Int; let testPassed: Bool; let dk: Hex }
    let parameterSet: String
    let keyGen: Group<KeyGen>
    let encapsulation: Group<Encapsulation>
    let decapsulation: Group<Decapsulation>
    let encapsulationKeyCheck: Group<EKCheck>
    let decapsulationKeyCheck: Group<DKCheck>

    static let all: MLKEMVectors = try! Vectors.load("mlkem768-fips203")
}

extension Hex {
    var secret: SecretBytes { var b = bytes; return try! SecretBytes(consuming: &b) }
}

@Suite struct MLKEMTests {
    let v = MLKEMVectors.all

    @Test func vectorFileHasAll80Cases() {
        #expect(v.parameterSet == "ML-KEM-768")
        #expect(v.keyGen.tests.count == 25 && v.encapsulation.tests.count == 25 && v.decapsulation.tests.count == 10)
        #expect(v.encapsulationKeyCheck.tests.count == 10 && v.decapsulationKeyCheck.tests.count == 10)
        #expect(v.decapsulation.tests.filter { $0.reason == "modified ciphertext" }.count == 5)
    }

    /// KeyGen_internal (Algorithm 16), all 25 cases.
    @Test func acvpKeyGen() throws {
        for t in v.keyGen.tests {
            let dk = try MLKEM768.generateKeyPair(d: t.d.secret, z: t.z.secret)
            #expect(dk.encapsulationKey.bytes == t.ek.bytes, "tcId \(t.tcId) ek")
            #expect(dk.secret.bytes == t.dk.bytes, "tcId \(t.tcId) dk")
        }
    }

    /// Encaps_internal (Algorithm 17), all 25 cases, and each one opened
    /// again with its dk.
    @Test func acvpEncapsulation() throws {
        for t in v.encapsulation.tests {
            let ek = try MLKEM768.EncapsulationKey(bytes: t.ek.bytes)
            let (c, k) = try MLKEM768.encapsulate(to: ek, randomness: t.m.secret)
            #expect(c == t.c.bytes, "tcId \(t.tcId) c")
            #expect(k.bytes == t.k.bytes, "tcId \(t.tcId) k")
            let dk = try MLKEM768.DecapsulationKey(secret: t.dk.secret)
            #expect(try MLKEM768.decapsulate(t.c.bytes, with: dk).bytes == t.k.bytes, "tcId \(t.tcId) round trip")
        }
    }

    /// Decaps_internal (Algorithm 18), all 10 cases; the 5 "modified
    /// ciphertext" ones give K̄ = J(z || c).
    @Test func acvpDecapsulation() throws {
        for t in v.decapsulation.tests {
            let dk = try MLKEM768.DecapsulationKey(secret: t.dk.secret)
            #expect(try MLKEM768.decapsulate(t.c.bytes, with: dk).bytes == t.k.bytes, "tcId \(t.tcId) (\(t.reason))")
        }
    }

    /// Section 7.2: length and modulus check on ek.
    @Test func acvpEncapsulationKeyCheck() {
        for t in v.encapsulationKeyCheck.tests {
            do {
                _ = try MLKEM768.EncapsulationKey(bytes: t.ek.bytes)
                #expect(t.testPassed, "tcId \(t.tcId) accepted a bad key")
            } catch let error as CryptoError {
                #expect(!t.testPassed, "tcId \(t.tcId) refused a good key: \(error)")
                if case .invalidKey = error {} else { Issue.record("tcId \(t.tcId): \(error)") }
            } catch { Issue.record("tcId \(t.tcId): \(error)") }
        }
    }

    /// Section 7.3: length and hash check on dk.
    @Test func acvpDecapsulationKeyCheck() {
        for t in v.decapsulationKeyCheck.tests {
            do {
                _ = try MLKEM768.DecapsulationKey(secret: t.dk.secret)
                #expect(t.testPassed, "tcId \(t.tcId) accepted a bad key")
            } catch let error as CryptoError {
                #expect(!t.testPassed, "tcId \(t.tcId) refused a good key: \(error)")
                if case .invalidKey = error {} else { Issue.record("tcId \(t.tcId): \(error)") }
            } catch { Issue.record("tcId \(t.tcId): \(error)") }
        }
    }
}

import Testing
import VaultCrypto

/// One RFC 9106 section 5 test vector.
struct Argon2Vector: Decodable, Sendable {
    let rfc9106Section, type: String
    let version, memoryKib, passes, lanes, tagLength: UInt32
    let password, salt, secret, associatedData, tag: Hex

    static let all: [Argon2Vector] = try! Vectors.load("argon2-rfc9106")

    var parameters: Argon2Parameters {
        get throws { try Argon2Parameters(memoryKiB: memoryKib, passes: passes, lanes: lanes) }
    }
}

@Suite struct Argon2Tests {
    func vector(_ type: String) throws -> Argon2Vector {
        try #require(Argon2Vector.all.first { $0.type == type })
    }

    @Test func rfc9106Argon2idThroughPublicAPI() throws {
        let v = try vector("argon2id")
        #expect(v.rfc9106Section == "5.3" && v.version == 0x13)
        // Secret, associated data and 4 lanes: only libargon2 can take this.
        let tag = try Argon2id.deriveKey(password: v.password.bytes, salt: v.salt.bytes, parameters: v.parameters,
                                         length: Int(v.tagLength), secret: v.secret.bytes,
                                         associatedData: v.associatedData.bytes)
        #expect(tag.bytes == v.tag.bytes)
    }

    @Test(arguments: [("argon2d", Argon2Reference.Variant.d), ("argon2i", .i), ("argon2id", .id)])
    func rfc9106Reference(type: String, variant: Argon2Reference.Variant) throws {
        let v = try vector(type)
        let tag = try Argon2Reference.hash(variant, password: v.password.bytes, salt: v.salt.bytes,
                                           secret: v.secret.bytes, associatedData: v.associatedData.bytes,
                                           parameters: v.parameters, length: Int(v.tagLength))
        #expect(tag == v.tag.bytes)
    }

    @Test func libsodiumAndLibargon2AgreeForOneLane() throws {
        let p = try Argon2Parameters(memoryKiB: 1024, passes: 3, lanes: 1)
        let password = Array("correct horse battery staple".utf8)
        let salt = SecureRandom.bytes(16)
        let sodium = try Argon2id.deriveKey(password: password, salt: salt, parameters: p, backend: .libsodium)
        let argon2 = try Argon2id.deriveKey(password: password, salt: salt, parameters: p, backend: .libargon2)
        let auto = try Argon2id.deriveKey(password: password, salt: salt, parameters: p)
        #expect(sodium.count == 32)
        #expect(sodium == argon2)
        #expect(auto == argon2)
        // Empty password too (libsodium gets a non-null pointer for it).
        #expect(try Argon2id.deriveKey(password: [UInt8](), salt: salt, parameters: p, backend: .libsodium)
                == Argon2id.deriveKey(password: [UInt8](), salt: salt, parameters: p, backend: .libargon2))
    }

    @Test func libsodiumBackendRefusesWhatItCannotCompute() throws {
        let salt = SecureRandom.bytes(16)
        let twoLanes = try Argon2Parameters(memoryKiB: 64, passes: 1, lanes: 2)
        let oneLane = try Argon2Parameters(memoryKiB: 64, passes: 1, lanes: 1)
        expectInvalidParameter { try Argon2id.deriveKey(password: [1], salt: salt, parameters: twoLanes, backend: .libsodium) }
        expectInvalidParameter {
            try Argon2id.deriveKey(password: [1], salt: salt, parameters: oneLane, secret: [1], backend: .libsodium)
        }
        expectInvalidParameter {
            try Argon2id.deriveKey(password: [1], salt: SecureRandom.bytes(12), parameters: oneLane, backend: .libsodium)
        }
    }

    @Test func deriveKeyInputBounds() throws {
        let p = try Argon2Parameters(memoryKiB: 64, passes: 1, lanes: 1)
        expectInvalidParameter { try Argon2id.deriveKey(password: [1], salt: SecureRandom.bytes(7), parameters: p) }
        expectInvalidParameter { try Argon2id.deriveKey(password: [1], salt: SecureRandom.bytes(16), parameters: p, length: 3) }
        expectInvalidParameter { try Argon2id.deriveKey(password: [1], salt: SecureRandom.bytes(16), parameters: p, length: 1025) }
    }

    @Test func parameterBounds() throws {
        let max = Argon2Parameters.maxMemoryKiB
        // Accepted edges.
        _ = try Argon2Parameters(memoryKiB: 8, passes: 1, lanes: 1)
        _ = try Argon2Parameters(memoryKiB: 8 * 16, passes: 64, lanes: 16)
        _ = try Argon2Parameters(memoryKiB: max, passes: 1, lanes: 1)
        // Rejected.
        expectInvalidParameter { try Argon2Parameters(memoryKiB: 64, passes: 1, lanes: 0) }
        expectInvalidParameter { try Argon2Parameters(memoryKiB: 1024, passes: 1, lanes: 17) }
        expectInvalidParameter { try Argon2Parameters(memoryKiB: 64, passes: 0, lanes: 1) }
        expectInvalidParameter { try Argon2Parameters(memoryKiB: 64, passes: 65, lanes: 1) }
        expectInvalidParameter { try Argon2Parameters(memoryKiB: 7, passes: 1, lanes: 1) }
        expectInvalidParameter { try Argon2Parameters(memoryKiB: 31, passes: 1, lanes: 4) }
        expectInvalidParameter { try Argon2Parameters(memoryKiB: max + 1, passes: 1, lanes: 1) }
        expectInvalidParameter { try Argon2Parameters(memoryKiB: .max, passes: .max, lanes: .max) }
    }
}

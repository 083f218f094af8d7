// The only file that imports libargon2. Used for Argon2id with more than one
// lane and for inputs crypto_pwhash cannot take (secret, associated data,
// salts other than 16 bytes), and for the RFC 9106 Argon2d/Argon2i vectors.
internal import CArgon2

enum LibArgon2 {
    enum Variant: UInt32 { case d = 0, i = 1, id = 2 }

    static func hash(_ variant: Variant, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
                     secret: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
                     passes: UInt32, memoryKiB: UInt32, lanes: UInt32,
                     into out: UnsafeMutableRawBufferPointer) throws {
        // argon2_ctx takes mutable pointers but only reads the inputs (we pass
        // no CLEAR_PASSWORD/CLEAR_SECRET flags).
        func ptr(_ b: UnsafeRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
            b.count == 0 ? nil : UnsafeMutablePointer(mutating: b.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        var ctx = argon2_context(
            out: out.baseAddress!.assumingMemoryBound(to: UInt8.self), outlen: UInt32(out.count),
            pwd: ptr(password), pwdlen: UInt32(password.count),
            salt: ptr(salt), saltlen: UInt32(salt.count),
            secret: ptr(secret), secretlen: UInt32(secret.count),
            ad: ptr(associatedData), adlen: UInt32(associatedData.count),
            t_cost: passes, m_cost: memoryKiB, lanes: lanes, threads: lanes,
            version: UInt32(ARGON2_VERSION_13.rawValue),
            allocate_cbk: nil, free_cbk: nil, flags: 0)
        let rc = argon2_ctx(&ctx, argon2_type(rawValue: variant.rawValue))
        if rc != Int32(ARGON2_OK.rawValue) {
            throw CryptoError.library(library: "libargon2", function: "argon2_ctx", code: Int(rc))
        }
    }
}

import ByteLayout
import VaultCrypto

// Item content after the header (docs/FORMAT.md, "Item content"):
//
//   S        = content || zero padding || u64be(content length)
//              with |S| = Padmé(|content| + 8)
//   chunk i  = S[i*M ..< min((i+1)*M, |S|)],  M = 1 MiB; the last chunk is final
//   nonce i  = nonce prefix (8) || u32be(i)
//   aad i    = header (36) || u32be(i) || final flag (1: 0x01 final, else 0x00)
//   on disk  = header || AES-256-GCM(file key, nonce i, aad i, chunk i) for each i
//
// Every chunk holds 1...M plaintext bytes (S is never empty), so the chunk
// count and the final chunk's size follow from the file size alone.

/// Shared constants and the per-chunk nonce and associated data.
public enum ItemCipher {
    public static let chunkSize = 1 << 20
    public static let tagLength = AEADAlgorithm.tagLength
    public static let sealedChunkSize = chunkSize + tagLength
    public static let trailerLength = 8
    /// The chunk index is 32 bits in the nonce.
    public static let maxChunks: UInt64 = 1 << 32
    /// Largest content this format can hold (with room for padding).
    public static let maxContentLength: UInt64 = (maxChunks - 1) * UInt64(chunkSize)
    /// Largest item file this format can have (header and every chunk sealed).
    public static let maxSealedLength: UInt64 = UInt64(ItemHeader.length) + maxChunks * UInt64(sealedChunkSize)

    /// |S| for a given content length.
    public static func streamLength(contentLength: UInt64) -> UInt64 {
        Padme.paddedLength(contentLength + UInt64(trailerLength))
    }

    /// Total bytes on disk for a stream of `streamLength` bytes.
    public static func sealedLength(streamLength s: UInt64) -> UInt64 {
        let chunks = (s + UInt64(chunkSize) - 1) / UInt64(chunkSize)
        return UInt64(ItemHeader.length) + s + chunks * UInt64(tagLength)
    }

    static func nonce(prefix: [UInt8], index: UInt32) -> [UInt8] {
        prefix + ByteWriter.bigEndian(index)
    }

    static func aad(header: [UInt8], index: UInt32, final: Bool) -> [UInt8] {
        header + ByteWriter.bigEndian(index) + [final ? 1 : 0]
    }
}

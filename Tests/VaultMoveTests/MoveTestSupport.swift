import Foundation
import VaultCrypto

/// Bytes for the move vectors (docs/FORMAT.md, "Device move"): runs of
/// consecutive bytes, as every vector's inputs are written there.
enum MoveVectorBytes {
    static func seq(_ from: UInt8, _ n: Int) -> [UInt8] { (0..<n).map { from &+ UInt8($0) } }
    static func secret(_ b: [UInt8]) -> SecretBytes { var c = b; return try! SecretBytes(consuming: &c) }
}

func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

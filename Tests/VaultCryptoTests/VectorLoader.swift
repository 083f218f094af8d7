import Foundation
import VaultCrypto

/// The one loader for the JSON vector files in Vectors/ (copied into the test
/// bundle). Keys are snake_case in the files and camelCase in the structs.
enum Vectors {
    static func load<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Vectors/\(name).json"])
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(T.self, from: Data(contentsOf: url))
    }
}

/// A hex string in a vector file, decoded to bytes.
struct Hex: Decodable, Sendable {
    let bytes: [UInt8]

    init(from decoder: any Decoder) throws {
        let string = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = [UInt8](hexString: string) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad hex: \(string)"))
        }
        self.bytes = bytes
    }
}

extension Array where Element == UInt8 {
    /// Decodes lower- or upper-case hex; nil for odd lengths or other characters.
    init?(hexString: String) {
        let digits = Array(hexString.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let hi = nibble(digits[i]), let lo = nibble(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        self = out
    }

    /// For hex literals typed into tests; a typo is a test bug, so it traps.
    init(hex: String) {
        guard let bytes = [UInt8](hexString: hex) else { preconditionFailure("bad hex literal: \(hex)") }
        self = bytes
    }
}

extension SecretBytes {
    /// The bytes as an array, for comparing against expected values in tests.
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    convenience init(hex: String) throws {
        var b = [UInt8](hex: hex)
        try self.init(consuming: &b)
    }
}

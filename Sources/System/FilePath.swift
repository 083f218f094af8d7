/// A path as the kernel sees it: bytes, not text. A Linux file name is any
/// bytes but '/' and NUL; turning one into a String would replace invalid
/// UTF-8 with U+FFFD and so name another file (a plaintext copy that can
/// then never be erased).
public struct FilePath: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { bytes = Array(string.utf8) }
    public init(stringLiteral value: String) { self.init(value) }

    /// `self/component`.
    public func appending(_ component: [UInt8]) -> FilePath {
        FilePath(bytes: bytes.last == slash || bytes.isEmpty ? bytes + component : bytes + [slash] + component)
    }

    public func appending(_ component: String) -> FilePath { appending(Array(component.utf8)) }

    /// The path as text when it is valid UTF-8.
    public var string: String? { String(validating: bytes, as: UTF8.self) }

    /// For messages: valid UTF-8 as is, any other byte as `\xNN`, so the
    /// user can still tell which file is meant.
    public var description: String {
        if let s = string { return s }
        var out = ""
        var i = 0
        while i < bytes.count {
            // The longest valid UTF-8 sequence here, else one byte escaped.
            var taken = false
            for n in stride(from: min(4, bytes.count - i), through: 1, by: -1) {
                if let s = String(validating: bytes[i..<(i + n)], as: UTF8.self) {
                    out += s
                    i += n
                    taken = true
                    break
                }
            }
            if !taken {
                let hex = String(bytes[i], radix: 16, uppercase: true)
                out += "\\x" + (hex.count < 2 ? "0" : "") + hex
                i += 1
            }
        }
        return out
    }

    /// Runs `body` with the path as a NUL-terminated C string.
    func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (bytes + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}

private let slash = UInt8(ascii: "/")

/// What the syscall functions take as a path: a `FilePath`, or a String for
/// the vault's own (ASCII) paths.
public protocol FilePathRepresentable {
    var filePath: FilePath { get }
}

extension FilePath: FilePathRepresentable {
    public var filePath: FilePath { self }
}

extension String: FilePathRepresentable {
    public var filePath: FilePath { FilePath(self) }
}

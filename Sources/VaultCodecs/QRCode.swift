// The only file that imports libqrencode. `QRCode.init` makes one
// QRcode_encodeString call, copies the module matrix into Swift storage and
// frees the C symbol before returning, so no C pointer or type outlives the
// initializer. A NULL result passes through `QRCode.failure`, the one place
// that turns libqrencode's errno into a `QRCodeError`.
//
// Renderings add the quiet zone of 4 light modules on every side that the
// QR specification (ISO/IEC 18004) requires for a reader to find the symbol.
internal import CQREncode
#if canImport(Glibc)
internal import Glibc   // errno, EINVAL, ENOMEM, ERANGE
#else
import Darwin
#endif

/// Errors of the QR code encoder.
public enum QRCodeError: Error, Equatable, Sendable {
    /// The text contains a NUL character, which a C string cannot carry.
    case containsNUL
    /// The text does not fit in the largest symbol (version 40) at error
    /// correction level M; libqrencode set errno to ERANGE.
    case tooLong
    /// libqrencode could not allocate memory (errno ENOMEM).
    case outOfMemory
    /// Any other libqrencode failure (EINVAL for empty text, for example);
    /// `function` names the call, `errno` is what it set.
    case library(function: String, errno: Int32)
}

/// A QR code symbol: a square matrix of dark and light modules.
public struct QRCode: Sendable {
    /// Light modules around the symbol in every rendering.
    public static let quietZone = 4

    /// Modules per side (21 for version 1, 4 more per version up to 177).
    public let size: Int
    /// Row-major, `true` for a dark module.
    private let modules: [Bool]

    /// Encodes `text` as a QR code: its UTF-8 bytes in 8-bit mode (with
    /// libqrencode's numeric and alphanumeric runs where they are shorter),
    /// error correction level M, the smallest version that fits.
    ///
    /// The corresponding C function is `QRcode_encodeString(text, 0,
    /// QR_ECLEVEL_M, QR_MODE_8, 1)`.
    public init(encoding text: String) throws {
        // A C string would silently end at the first NUL, encoding less than asked.
        guard !text.utf8.contains(0) else { throw QRCodeError.containsNUL }
        let copied: Result<(size: Int, modules: [Bool]), QRCodeError> = text.withCString { cText in
            guard let code = QRcode_encodeString(cText, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
                // Read errno at once, before anything else can overwrite it.
                return .failure(Self.failure(function: "QRcode_encodeString", errno: errno))
            }
            defer { QRcode_free(code) }
            let width = Int(code.pointee.width)
            // Each byte describes one module; bit 0 is "dark", the other
            // bits are libqrencode's bookkeeping (function patterns, etc.).
            let data = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
            return .success((width, data.map { $0 & 1 == 1 }))
        }
        (size, modules) = try copied.get()
    }

    // libqrencode reports failures only through errno.
    private static func failure(function: String, errno code: Int32) -> QRCodeError {
        switch code {
        case ERANGE: return .tooLong
        case ENOMEM: return .outOfMemory
        default: return .library(function: function, errno: code)
        }
    }

    /// Whether the module in column `x`, row `y` (both 0..<size, from the top
    /// left) is dark. Coordinates outside the symbol are light, as the quiet
    /// zone is.
    public func isDark(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x]
    }

    /// The symbol as text for a terminal: each character is one module wide
    /// and two modules tall ("▀" top dark, "▄" bottom dark, "█" both, " "
    /// neither), with the quiet zone on every side. Dark modules are drawn,
    /// as ink on paper, so it scans on a light-background terminal. Every
    /// line has `size + 8` characters, there are `(size + 9) / 2` lines (the
    /// last line's lower half lies below the quiet zone, and is light), and
    /// each ends with "\n".
    public func renderText() -> String {
        let q = Self.quietZone
        var out = ""
        var y = -q
        while y < size + q {
            for x in -q..<(size + q) {
                switch (isDark(x: x, y: y), isDark(x: x, y: y + 1)) {
                case (true, true): out += "█"
                case (true, false): out += "▀"
                case (false, true): out += "▄"
                case (false, false): out += " "
                }
            }
            out += "\n"
            y += 2
        }
        return out
    }

    /// The symbol as a binary PBM image (P4), `scale` pixels per module
    /// (at least 1), with the quiet zone on every side. Black pixels are
    /// dark modules.
    public func renderPBM(scale: Int = 4) -> [UInt8] {
        precondition(scale >= 1, "scale must be at least 1")
        let q = Self.quietZone
        let side = (size + 2 * q) * scale
        let rowBytes = (side + 7) / 8
        var out = Array("P4\n\(side) \(side)\n".utf8)
        out.reserveCapacity(out.count + rowBytes * side)
        var row = [UInt8](repeating: 0, count: rowBytes)
        for py in 0..<side {
            for i in row.indices { row[i] = 0 }
            let y = py / scale - q
            for px in 0..<side where isDark(x: px / scale - q, y: y) {
                row[px >> 3] |= 0x80 >> UInt8(px & 7)   // most significant bit first; 1 is black
            }
            out += row
        }
        return out
    }

    /// The symbol as an SVG element for inline use in HTML: one path of
    /// unit squares for the dark modules on a white square that includes
    /// the quiet zone, so it scans dark on light whatever the page's colours.
    /// `side` is the rendered width and height (a CSS length such as "60mm").
    public func renderSVG(side: String) -> String {
        let q = Self.quietZone, n = size + 2 * q
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else { x += 1; continue }
                var run = 1
                while isDark(x: x + run, y: y) { run += 1 }
                path += "M\(x + q) \(y + q)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return "<svg viewBox=\"0 0 \(n) \(n)\" width=\"\(side)\" height=\"\(side)\" shape-rendering=\"crispEdges\" role=\"img\">"
            + "<rect width=\"\(n)\" height=\"\(n)\" fill=\"#fff\"/><path fill=\"#000\" d=\"\(path)\"/></svg>"
    }
}

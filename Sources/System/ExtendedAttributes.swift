import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// Extended attributes (xattr(7)): `user.*`, `security.*` (file
/// capabilities, SELinux labels), `trusted.*` and `system.posix_acl_*`
/// (ACLs), read and written without following a symbolic link.
extension Syscall {
    /// The largest value Linux keeps (XATTR_SIZE_MAX), and list (XATTR_LIST_MAX).
    public static let extendedAttributeValueMax = 65_536
    public static let extendedAttributeListMax = 65_536

    /// The attribute names of `path` itself (`llistxattr`; attributeNames).
    public static func extendedAttributeNames(_ path: FilePath) throws -> [[UInt8]] {
        try attributeNames(display: path.description) { buffer, size in path.withCString { llistxattr($0, buffer, size) } }
    }

    /// The value of attribute `name` of `path` itself (`lgetxattr`; attributeValue).
    public static func extendedAttribute(_ path: FilePath, _ name: [UInt8]) throws -> [UInt8]? {
        try attributeValue(name, display: path.description) { key, buffer, size in path.withCString { lgetxattr($0, key, buffer, size) } }
    }

    /// The attribute names of the open file `fd` (`flistxattr`): no path
    /// is walked again for a file already open.
    public static func extendedAttributeNames(fd: Int32) throws -> [[UInt8]] {
        try attributeNames(display: nil) { buffer, size in flistxattr(fd, buffer, size) }
    }

    /// The value of attribute `name` of the open file `fd` (`fgetxattr`).
    public static func extendedAttribute(fd: Int32, _ name: [UInt8]) throws -> [UInt8]? {
        try attributeValue(name, display: nil) { key, buffer, size in fgetxattr(fd, key, buffer, size) }
    }

    /// The names a list call (`llistxattr` or `flistxattr`: into a buffer
    /// of a size, or the size needed for nil) gives; [] where the file
    /// system has none (ENOTSUP). A list that grows between the two calls
    /// is asked for again (a few times).
    private static func attributeNames(display: String?,
                                       _ list: (UnsafeMutablePointer<CChar>?, Int) -> Int) throws(SystemError) -> [[UInt8]] {
        for _ in 0..<4 {
            let size = list(nil, 0)
            if size < 0 {
                let e = Errno(rawValue: errno)
                if e == .notSupported { return [] }
                throw SystemError(operation: .listxattr, path: display, errno: e)
            }
            guard size > 0 else { return [] }
            guard size <= extendedAttributeListMax else { throw SystemError(operation: .listxattr, path: display, errno: .tooBig) }
            var buffer = [UInt8](repeating: 0, count: size)
            let n = buffer.withUnsafeMutableBytes { list($0.baseAddress!.assumingMemoryBound(to: CChar.self), size) }
            if n < 0 {
                if errno == ERANGE { continue }
                throw SystemError(operation: .listxattr, path: display, errno: Errno(rawValue: errno))
            }
            return buffer[..<n].split(separator: 0).map(Array.init)
        }
        throw SystemError(operation: .listxattr, path: display, errno: .outOfRange)
    }

    /// The value a get call (`lgetxattr` or `fgetxattr`: key, buffer,
    /// size) gives for `name`; nil when it went meanwhile. Sized first, then
    /// read (a value that grew between is asked again): most values are a
    /// few bytes, and a 64 KiB buffer per attribute of a million labelled
    /// files would be 64 GB of zeroing.
    private static func attributeValue(_ name: [UInt8], display: String?,
                                       _ get: (UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int) throws(SystemError) -> [UInt8]? {
        let key = name + [0]
        return try key.withUnsafeBufferPointer { nm throws(SystemError) -> [UInt8]? in
            let k = UnsafeRawPointer(nm.baseAddress!).assumingMemoryBound(to: CChar.self)
            for _ in 0..<4 {
                let size = get(k, nil, 0)
                if size < 0 {
                    if errno == ENODATA { return nil }
                    throw SystemError(operation: .getxattr, path: display, errno: Errno(rawValue: errno))
                }
                guard size > 0 else { return [] }
                guard size <= extendedAttributeValueMax else { throw SystemError(operation: .getxattr, path: display, errno: .tooBig) }
                var buffer = [UInt8](repeating: 0, count: size)
                let n = buffer.withUnsafeMutableBytes { get(k, $0.baseAddress, size) }
                if n >= 0 { return Array(buffer[..<n]) }
                if errno == ENODATA { return nil }
                if errno != ERANGE { throw SystemError(operation: .getxattr, path: display, errno: Errno(rawValue: errno)) }
            }
            throw SystemError(operation: .getxattr, path: display, errno: .outOfRange)
        }
    }

    /// Sets attribute `name` on the open file `fd`.
    public static func setExtendedAttribute(_ fd: Int32, _ name: [UInt8], _ value: [UInt8], display: String) throws {
        let r = (name + [0]).withUnsafeBufferPointer { nm in
            value.withUnsafeBytes { fsetxattr(fd, UnsafeRawPointer(nm.baseAddress!).assumingMemoryBound(to: CChar.self), $0.baseAddress, value.count, 0) }
        }
        if r != 0 { throw SystemError(operation: .setxattr, path: display, errno: Errno(rawValue: errno)) }
    }

    /// Sets attribute `name` on `path` itself (a symbolic link is not followed).
    public static func setExtendedAttribute(_ path: FilePath, _ name: [UInt8], _ value: [UInt8]) throws {
        let r = path.withCString { p in
            (name + [0]).withUnsafeBufferPointer { nm in
                value.withUnsafeBytes { lsetxattr(p, UnsafeRawPointer(nm.baseAddress!).assumingMemoryBound(to: CChar.self), $0.baseAddress, value.count, 0) }
            }
        }
        if r != 0 { throw SystemError(operation: .setxattr, path: path.description, errno: Errno(rawValue: errno)) }
    }

    /// The attributes of the open file `fd` (names and values, in name
    /// order), or of `name` in the open directory `dir` when given (the
    /// entry itself, a link not followed). What cannot be read is left
    /// out; nil where the file system has none.
    public static func extendedAttributes(fd: Int32, name: [UInt8]? = nil) -> [(name: [UInt8], value: [UInt8])] {
        // /proc/self/fd/N names the open file itself; with a name, the entry
        // in that directory, read with the l* calls so a link is not followed.
        let path = FilePath(bytes: Array("/proc/self/fd/\(fd)".utf8) + (name.map { [0x2f] + $0 } ?? []))
        let follow = name == nil
        func list() -> [[UInt8]] {
            for _ in 0..<4 {
                let size = path.withCString { follow ? listxattr($0, nil, 0) : llistxattr($0, nil, 0) }
                guard size > 0, size <= extendedAttributeListMax else { return [] }
                var buffer = [UInt8](repeating: 0, count: size)
                let n = path.withCString { p in buffer.withUnsafeMutableBytes { b in
                    let out = b.baseAddress!.assumingMemoryBound(to: CChar.self)
                    return follow ? listxattr(p, out, size) : llistxattr(p, out, size)
                } }
                if n >= 0 { return buffer[..<n].split(separator: 0).map(Array.init) }
                if errno != ERANGE { return [] }
            }
            return []
        }
        /// getxattr or lgetxattr into `buffer` (nil, 0: the size).
        func get(_ key: UnsafePointer<CChar>, _ buffer: UnsafeMutableRawPointer?, _ size: Int) -> Int {
            path.withCString { follow ? getxattr($0, key, buffer, size) : lgetxattr($0, key, buffer, size) }
        }
        var out: [(name: [UInt8], value: [UInt8])] = []
        for attribute in list().sorted(by: { $0.lexicographicallyPrecedes($1) }) where attribute.count <= 255 && out.last?.name != attribute {
            // Sized first (see extendedAttribute); one that changes meanwhile is left out.
            let value: [UInt8]? = (attribute + [0]).withUnsafeBufferPointer { nm in
                let key = UnsafeRawPointer(nm.baseAddress!).assumingMemoryBound(to: CChar.self)
                let size = get(key, nil, 0)
                guard size >= 0, size <= extendedAttributeValueMax else { return nil }
                var buffer = [UInt8](repeating: 0, count: size)
                let n = size == 0 ? 0 : buffer.withUnsafeMutableBytes { get(key, $0.baseAddress, size) }
                return n == size ? buffer : nil
            }
            if let value { out.append((attribute, value)) }
        }
        return out
    }
}

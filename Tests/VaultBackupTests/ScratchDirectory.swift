import Foundation

/// A new empty directory under the system temp directory, for a test that
/// removes it when done.
func scratchDirectory(_ prefix: String) throws -> String {
    let dir = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
    return dir
}

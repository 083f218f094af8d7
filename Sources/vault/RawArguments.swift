/// The command line as bytes. Swift's `CommandLine.arguments` decodes each
/// argument as UTF-8, replacing what is not with U+FFFD, so a path such as
/// `caf\xe9.txt` would become a different, usually missing, file. Commands
/// that take paths ask here whether an argument lost bytes, and refuse it
/// with a clear message instead of acting on the wrong name.
enum RawArguments {
    /// The decoded forms of the arguments that were not valid UTF-8.
    static let lossy: Set<String> = {
        var out: Set<String> = []
        for i in 0..<Int(CommandLine.argc) {
            guard let p = CommandLine.unsafeArgv[i] else { continue }
            var n = 0
            while p[n] != 0 { n += 1 }
            let bytes = UnsafeBufferPointer(start: p, count: n).map { UInt8(bitPattern: $0) }
            if String(validating: bytes, as: UTF8.self) == nil { out.insert(String(decoding: bytes, as: UTF8.self)) }
        }
        return out
    }()

    /// Whether `argument` stands for bytes that were not valid UTF-8.
    static func isLossy(_ argument: String) -> Bool {
        argument.unicodeScalars.contains("\u{FFFD}") && lossy.contains(argument)
    }
}

extension ParsedArguments {
    /// A path argument that must reach the file system as typed.
    func requireExact(path: String?) throws(CLIError) {
        if let path, RawArguments.isLossy(path) {
            throw usageError("'\(path)' is not valid UTF-8, so vault cannot use it as a path; rename it")
        }
    }
}

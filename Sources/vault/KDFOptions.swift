import Foundation  // String.padding
import VaultCore
import VaultCrypto

/// `--kdf-memory MIB`, `--kdf-passes N` and (for `init`) `--kdf-lanes N`:
/// Argon2id overrides, checked against `KDFLimits`, the same bounds the
/// header and kit parsers apply, so a value accepted here always makes a
/// vault or kit that opens again. Values below the minimums need
/// VAULT_ALLOW_WEAK_KDF=1.
struct KDFOptions: Sendable {
    var memoryMiB: UInt32?
    var passes: UInt32?
    var lanes: UInt32?

    static let memory = ValueOption<UInt32>.number("--kdf-memory", as: "MIB")
    static let passesOption = ValueOption<UInt32>.number("--kdf-passes", as: "N")
    static let lanesOption = ValueOption<UInt32>.number("--kdf-lanes", as: "N")

    static func specs(lanes: Bool) -> [OptionSpec] {
        [memory.spec, passesOption.spec] + (lanes ? [lanesOption.spec] : [])
    }

    /// The options' lines for a help page, with the limits filled in; the
    /// descriptions start at column `column` (after the two-space indent).
    static func help(lanes: Bool, prefix: String = "", column: Int = 19) -> String {
        var lines = [
            ("--kdf-memory MIB", "Argon2id memory in MiB (\(KDFLimits.minimumMemoryMiB) to \(KDFLimits.maxMemoryMiB))"),
            ("--kdf-passes N", "Argon2id passes (\(KDFLimits.minimumPasses) to \(KDFLimits.maxPasses))"),
        ]
        if lanes { lines.append(("--kdf-lanes N", "Argon2id lanes (1 to \(KDFLimits.maxLanes))")) }
        return lines.map { "  " + $0.0.padding(toLength: column, withPad: " ", startingAt: 0) + prefix + $0.1 }
            .joined(separator: "\n")
    }

    init(parsing arguments: ParsedArguments, lanes: Bool) throws(CLIError) {
        memoryMiB = try arguments.value(Self.memory)
        passes = try arguments.value(Self.passesOption)
        self.lanes = lanes ? try arguments.value(Self.lanesOption) : nil
    }

    var isEmpty: Bool { memoryMiB == nil && passes == nil && lanes == nil }
    /// Memory and passes both given: nothing left to calibrate.
    var skipsCalibration: Bool { memoryMiB != nil && passes != nil }

    func validate(environment: [String: String], command: String) throws(CLIError) {
        let weakAllowed = environment["VAULT_ALLOW_WEAK_KDF"] == "1"
        try check("--kdf-memory", memoryMiB, unit: " MiB", max: KDFLimits.maxMemoryMiB,
                  floor: KDFLimits.minimumMemoryMiB, weakAllowed: weakAllowed, command: command)
        try check("--kdf-passes", passes, unit: "", max: KDFLimits.maxPasses,
                  floor: KDFLimits.minimumPasses, weakAllowed: weakAllowed, command: command)
        try check("--kdf-lanes", lanes, unit: "", max: KDFLimits.maxLanes, floor: 1, weakAllowed: weakAllowed, command: command)
    }

    private func check(_ option: String, _ value: UInt32?, unit: String, max: UInt32, floor: UInt32,
                       weakAllowed: Bool, command: String) throws(CLIError) {
        guard let value else { return }
        if value > max { throw .usage("\(option) \(value)\(unit) is above the maximum of \(max)", command: command) }
        if value < 1 { throw .usage("\(option) \(value)\(unit) is below the minimum of 1", command: command) }
        if value < floor && !weakAllowed {
            throw CLIError(message: "\(option) \(value)\(unit) is below the minimum of \(floor)",
                           hints: ["weaker settings are for tests and demos only: set VAULT_ALLOW_WEAK_KDF=1 to allow them"],
                           code: .usage)
        }
    }

    /// The parameters to use: each override replaces its calibrated value.
    func parameters(calibrated: Argon2Parameters) throws -> Argon2Parameters {
        try Argon2Parameters(memoryKiB: memoryMiB.map { $0 * 1024 } ?? calibrated.memoryKiB,
                             passes: passes ?? calibrated.passes, lanes: lanes ?? calibrated.lanes)
    }
}

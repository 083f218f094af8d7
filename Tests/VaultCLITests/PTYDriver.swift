import Foundation

/// Runs a program on a pseudo-terminal through scripts/pty-driver.py, which
/// waits for each prompt before typing, as a person would, and reports what
/// the terminal showed and whether echo was on at each prompt.
enum PTYDriver {
    static let script = CLIHarness.packageRoot + "/scripts/pty-driver.py"

    struct Step: Encodable, Sendable {
        var expect: String?
        var send: String?
        var sleep: Double?
        static func expect(_ text: String) -> Step { Step(expect: text) }
        static func send(_ text: String) -> Step { Step(send: text) }
        /// Waits (reading the terminal) before the next step.
        static func sleep(_ seconds: Double) -> Step { Step(sleep: seconds) }
    }

    struct Result: Decodable, Sendable {
        var exit: Int32?
        var signal: Int32?
        var timed_out: Bool
        /// The index of the expect step whose text never appeared.
        var failed_step: Int?
        /// The terminal's ECHO flag when each expected text had appeared.
        var echo_at_expect: [Bool]
        /// The ECHO flag after the program ended.
        var echo_after: Bool
        var transcript: String
        /// The transcript with the terminal's "\r\n" turned back into "\n".
        var text: String { transcript.replacingOccurrences(of: "\r\n", with: "\n") }

        /// What the screen shows at the end: a carriage return goes back to
        /// the start of the line and later characters overwrite earlier
        /// ones, as on a terminal; trailing spaces dropped. A progress line
        /// wiped over output shows here as the output gone.
        var screen: String {
            text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
                var cells: [Character] = []
                var column = 0
                for c in line {
                    if c == "\r" { column = 0; continue }
                    if column < cells.count { cells[column] = c } else { cells.append(c) }
                    column += 1
                }
                var shown = String(cells)
                while shown.last == " " { shown.removeLast() }
                return shown
            }.joined(separator: "\n")
        }
    }

    private struct Request: Encodable {
        var argv: [String]
        var timeout: Double
        var steps: [Step]
    }

    static func run(_ args: [String], steps: [Step], environment: [String: String], timeout: Double = 20,
                    executable: String = CLIHarness.binary) throws -> Result {
        let request = try JSONEncoder().encode(Request(argv: [executable] + args, timeout: timeout, steps: steps))
        let ran = try CLIHarness.run(["python3", script], stdin: Array(request), environment: environment,
                                     timeout: timeout + 10, executable: "/usr/bin/env")
        guard ran.status == 0 else {
            throw DriverFailed(description: "pty-driver exited \(ran.status): \(ran.stderr)")
        }
        return try JSONDecoder().decode(Result.self, from: Data(ran.stdout))
    }

    struct DriverFailed: Error, CustomStringConvertible { let description: String }
}

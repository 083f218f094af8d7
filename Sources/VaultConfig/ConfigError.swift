/// What is wrong with the config file, where: the CLI words it as one
/// line, "FILE:LINE: KEY: problem", exit 2, before anything runs.
public struct ConfigError: Error, Equatable, Sendable {
    /// 1-based; 0 when the problem is the file as a whole.
    public let line: Int
    /// The key the problem is at ("profiles.home.paths"), if any.
    public let key: String?
    public let problem: Problem

    public init(line: Int, key: String? = nil, problem: Problem) { (self.line, self.key, self.problem) = (line, key, problem) }

    public enum Problem: Equatable, Sendable {
        case syntax(String)
        case tooLarge
        case moreThanOneDocument
        case nestedTooDeep
        case alias
        case keyNotText
        case duplicateKey
        case unknownKey(known: [String])
        case wrongType(expected: String)
        case invalidValue(String)
        case noProfiles
        case noSuchProfile(known: [String])
    }
}

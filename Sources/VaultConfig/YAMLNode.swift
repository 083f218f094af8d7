import CYAML

/// A YAML document as the config file uses it: mappings, sequences and
/// scalars (all text), each with the line it starts on (1-based). Read
/// with libyaml's event parser. What a config has no use for is refused,
/// not guessed at: aliases (a document that expands itself a billion
/// times), more than one document, nesting past `maxDepth`, and a
/// mapping key that is not a plain scalar or appears twice.
public indirect enum YAMLNode: Equatable, Sendable {
    case scalar(String, line: Int)
    case sequence([YAMLNode], line: Int)
    case mapping([(key: String, line: Int, value: YAMLNode)], line: Int)

    public static let maxDepth = 32
    public static let maxLength = 1 << 20

    public var line: Int {
        switch self {
        case .scalar(_, let line), .sequence(_, let line), .mapping(_, let line): line
        }
    }

    public static func == (a: YAMLNode, b: YAMLNode) -> Bool {
        switch (a, b) {
        case let (.scalar(x, l), .scalar(y, m)): x == y && l == m
        case let (.sequence(x, l), .sequence(y, m)): x == y && l == m
        case let (.mapping(x, l), .mapping(y, m)):
            l == m && x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.line == $1.line && $0.value == $1.value }
        default: false
        }
    }

    /// The one document in `bytes` (nil: none, an empty file).
    public static func parse(_ bytes: [UInt8]) throws(ConfigError) -> YAMLNode? {
        guard bytes.count <= maxLength else { throw ConfigError(line: 0, problem: .tooLarge) }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw ConfigError(line: 0, problem: .syntax("the YAML parser would not start")) }
        defer { yaml_parser_delete(&parser) }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(ConfigError) -> YAMLNode? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var reader = EventReader(parser: &parser)
            return try reader.document()
        }
    }
}

/// Pulls libyaml's events and builds nodes, one level of Swift recursion per
/// level of nesting (bounded by `YAMLNode.maxDepth`).
private struct EventReader {
    let parser: UnsafeMutablePointer<yaml_parser_t>

    init(parser: UnsafeMutablePointer<yaml_parser_t>) { self.parser = parser }

    enum Event { case streamStart, streamEnd, documentStart, documentEnd, scalar(String), sequenceStart, sequenceEnd,
                     mappingStart, mappingEnd, alias }

    /// The next event and its line (1-based).
    func next() throws(ConfigError) -> (Event, Int) {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else {
            let line = Int(parser.pointee.problem_mark.line) + 1
            let problem = parser.pointee.problem.map { String(cString: $0) } ?? "not YAML"
            throw ConfigError(line: line, problem: .syntax(problem))
        }
        defer { yaml_event_delete(&event) }
        let line = Int(event.start_mark.line) + 1
        switch event.type {
        case YAML_STREAM_START_EVENT: return (.streamStart, line)
        case YAML_STREAM_END_EVENT: return (.streamEnd, line)
        case YAML_DOCUMENT_START_EVENT: return (.documentStart, line)
        case YAML_DOCUMENT_END_EVENT: return (.documentEnd, line)
        case YAML_SEQUENCE_START_EVENT: return (.sequenceStart, line)
        case YAML_SEQUENCE_END_EVENT: return (.sequenceEnd, line)
        case YAML_MAPPING_START_EVENT: return (.mappingStart, line)
        case YAML_MAPPING_END_EVENT: return (.mappingEnd, line)
        case YAML_ALIAS_EVENT: return (.alias, line)
        case YAML_SCALAR_EVENT:
            let s = event.data.scalar
            let text = String(decoding: UnsafeBufferPointer(start: s.value, count: s.length), as: UTF8.self)
            return (.scalar(text), line)
        default:
            throw ConfigError(line: line, problem: .syntax("an unexpected YAML event"))
        }
    }

    mutating func document() throws(ConfigError) -> YAMLNode? {
        guard case (.streamStart, _) = try next() else { throw ConfigError(line: 1, problem: .syntax("no YAML stream")) }
        let (first, line) = try next()
        switch first {
        case .streamEnd: return nil
        case .documentStart: break
        default: throw ConfigError(line: line, problem: .syntax("no YAML document"))
        }
        let (start, startLine) = try next()
        let root = try node(start, line: startLine, depth: 1)
        guard case (.documentEnd, _) = try next() else { throw ConfigError(line: line, problem: .syntax("the document does not end")) }
        let (end, endLine) = try next()
        guard case .streamEnd = end else { throw ConfigError(line: endLine, problem: .moreThanOneDocument) }
        return root
    }

    mutating func node(_ event: Event, line: Int, depth: Int) throws(ConfigError) -> YAMLNode {
        guard depth <= YAMLNode.maxDepth else { throw ConfigError(line: line, problem: .nestedTooDeep) }
        switch event {
        case .scalar(let text):
            return .scalar(text, line: line)
        case .sequenceStart:
            var items: [YAMLNode] = []
            while true {
                let (e, l) = try next()
                if case .sequenceEnd = e { return .sequence(items, line: line) }
                items.append(try node(e, line: l, depth: depth + 1))
            }
        case .mappingStart:
            var pairs: [(key: String, line: Int, value: YAMLNode)] = []
            while true {
                let (e, l) = try next()
                if case .mappingEnd = e { return .mapping(pairs, line: line) }
                guard case .scalar(let key) = e else { throw ConfigError(line: l, problem: .keyNotText) }
                guard !pairs.contains(where: { $0.key == key }) else { throw ConfigError(line: l, key: key, problem: .duplicateKey) }
                let (v, vl) = try next()
                pairs.append((key, l, try node(v, line: vl, depth: depth + 1)))
            }
        case .alias:
            throw ConfigError(line: line, problem: .alias)
        default:
            throw ConfigError(line: line, problem: .syntax("an unexpected YAML event"))
        }
    }
}

import CCurl
import Synchronization

/// Range reads from one local HTTP server (RcloneServer), with libcurl's
/// easy interface: a few kept connections, each used by one read at a time
/// (ItemReader reads chunks from several threads). Every answer is held to
/// what was asked: status 206 with a Content-Range naming exactly the bytes
/// asked for and a body of exactly that length, or 404; anything else is
/// `RemoteDamage.wrongAnswer`, and nothing of it is returned.
// @unchecked Sendable: the handles are only touched under `spare`'s lock
// or by the one read that took one out of it.
final class HTTPRange: @unchecked Sendable {
    /// "http://127.0.0.1:PORT/"
    let base: String
    /// "vault:TOKEN", basic authentication the server was started with.
    private let login: String
    private let spare = Mutex<[Handle]>([])
    /// A libcurl easy handle, used by one read at a time.
    private struct Handle: @unchecked Sendable { let pointer: UnsafeMutableRawPointer }
    /// Requests made and body bytes received, for VAULT_STATS and the bench.
    let requests = Atomic<Int>(0)
    let received = Atomic<UInt64>(0)
    /// The most a single answer may hold: a block of RemoteBlobSource.
    static let maxAnswer = 16 << 20
    private static let kept = 4

    init(base: String, login: String) {
        self.base = base
        self.login = login
    }

    deinit { for h in spare.withLock({ $0 }) { vault_curl_easy_cleanup(h.pointer) } }

    /// `count` bytes of `path` from `offset`, with the object's whole size
    /// as the server gave it; nil if there is no such object. `clipped`:
    /// fewer where the object ends first (the first read of a blob, whose
    /// size it learns), else exactly `count`.
    func read(_ path: String, offset: UInt64, count: Int, clipped: Bool) throws -> (bytes: [UInt8], total: UInt64)? {
        precondition(count > 0 && count <= Self.maxAnswer)
        let last = offset + UInt64(count) - 1
        return try exchange(path, range: "\(offset)-\(last)", limit: count) { answer in
            guard let r = answer.contentRange, r.first == offset, r.total > r.last,
                  clipped ? r.last == min(last, r.total - 1) : r.last == last,
                  UInt64(answer.body.count) == r.last - offset + 1 else {
                throw RemoteError.malformedRemote(.wrongAnswer(path))
            }
            return (answer.body, r.total)
        }
    }

    /// The last `count` bytes of `path` (all of it, if shorter) and its
    /// whole size; nil if there is no such object.
    func tail(_ path: String, count: Int) throws -> (bytes: [UInt8], total: UInt64)? {
        try exchange(path, range: "-\(count)", limit: count) { answer in
            guard let r = answer.contentRange, r.last + 1 == r.total, r.total - r.first == UInt64(min(UInt64(count), r.total)),
                  UInt64(answer.body.count) == r.total - r.first else {
                throw RemoteError.malformedRemote(.wrongAnswer(path))
            }
            return (answer.body, r.total)
        }
    }

    /// `path` from `offset` to its end in one request, handed to `take` as
    /// it arrives (a whole-blob read: one request where windows made
    /// several, each of which made rclone open the S3 object twice). The
    /// answer must be 206 with a Content-Range from `offset` to the
    /// object's end; `begin` is given the object's size before any byte.
    /// `take` returning false stops the transfer. Returns false when there
    /// is no such object; throws when the answer is wrong, cut short, or
    /// stopped.
    func stream(_ path: String, from offset: UInt64, begin: @escaping (UInt64) -> Bool,
                take: @escaping (UnsafeRawBufferPointer) -> Bool) throws -> Bool {
        var expected: UInt64 = 0
        let streaming = AnswerBox.Streaming(begin: { answer in
            guard let r = answer.contentRange, r.first == offset, r.last + 1 == r.total, begin(r.total) else { return false }
            expected = r.total - offset
            return true
        }, take: take)
        let done: Bool? = try exchange(path, range: "\(offset)-", limit: 0, streaming: streaming) { answer in
            guard answer.streamed == expected else { throw RemoteError.malformedRemote(.wrongAnswer(path)) }
            return true
        }
        return done != nil
    }

    struct Answer {
        var body: [UInt8] = []
        var headers: [UInt8] = []
        var limit = 0
        var overflow = false
        /// Body bytes handed to a stream's `take`.
        var streamed: UInt64 = 0
        /// The status of the last status line ("HTTP/1.1 206 ..."), 0 if none.
        var status: Int {
            var found = 0
            for line in headers.split(separator: 10) where line.starts(with: Array("HTTP/".utf8)) {
                let fields = line.split(separator: 32)
                found = fields.count > 1 ? Int(String(decoding: fields[1], as: UTF8.self)) ?? 0 : 0
            }
            return found
        }
        /// Content-Range: bytes FIRST-LAST/TOTAL, exactly.
        var contentRange: (first: UInt64, last: UInt64, total: UInt64)? {
            for line in headers.split(separator: 10) {
                var text = String(decoding: line, as: UTF8.self)
                if text.hasSuffix("\r") { text.removeLast() }
                guard text.lowercased().hasPrefix("content-range: bytes ") else { continue }
                let value = text.dropFirst("content-range: bytes ".count)
                let parts = value.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 2, let total = UInt64(parts[1]) else { return nil }
                let ends = parts[0].split(separator: "-", omittingEmptySubsequences: false)
                guard ends.count == 2, let first = UInt64(ends[0]), let last = UInt64(ends[1]), first <= last else { return nil }
                return (first, last, total)
            }
            return nil
        }
    }

    /// One GET with a Range header. 206 goes to `check`; 404 is nil; any
    /// other status, an answer longer than `limit` or a transport failure
    /// throws.
    private func exchange<T>(_ path: String, range: String, limit: Int, streaming: AnswerBox.Streaming? = nil,
                             _ check: (Answer) throws -> T) throws -> T? {
        let taken = try take()
        defer { give(taken) }
        let handle = taken.pointer
        let box = Unmanaged.passRetained(AnswerBox(limit: limit, streaming: streaming))
        defer { box.release() }
        let b = box.takeUnretainedValue()
        _ = vault_curl_set_string(handle, CURLOPT_URL, base + path)
        _ = vault_curl_set_string(handle, CURLOPT_RANGE, range)
        _ = vault_curl_set_pointer(handle, CURLOPT_WRITEDATA, box.toOpaque())
        _ = vault_curl_set_pointer(handle, CURLOPT_HEADERDATA, box.toOpaque())
        let rc = vault_curl_easy_perform(handle)
        requests.add(1, ordering: .relaxed)
        received.add(UInt64(b.answer.body.count) + b.answer.streamed, ordering: .relaxed)
        if b.answer.overflow { throw RemoteError.malformedRemote(.wrongAnswer(path)) }
        if b.stopped { throw RemoteError.rcloneFailed(operation: .read, failure: .said("the read was stopped")) }
        guard rc == CURLE_OK else {
            throw RemoteError.rcloneFailed(operation: .read, failure: .said(String(cString: vault_curl_easy_strerror(rc))))
        }
        var status = 0
        _ = vault_curl_response_code(handle, &status)
        switch status {
        case 206: return try check(b.answer)
        case 404: return nil
        default: throw RemoteError.rcloneFailed(operation: .read, failure: .said("HTTP status \(status) from rclone serve"))
        }
    }

    private func take() throws -> Handle {
        if let h = spare.withLock({ $0.popLast() }) { return h }
        // libcurl is loaded on first use (CCurl): its absence is this read's failure, said as such.
        guard vault_curl_load() == 1 else {
            throw RemoteError.rcloneFailed(operation: .read, failure: .said(String(cString: vault_curl_easy_strerror(CURLE_FAILED_INIT))))
        }
        guard let h = vault_curl_easy_init() else { throw RemoteError.rcloneFailed(operation: .read, failure: .said("libcurl could not start")) }
        _ = vault_curl_set_string(h, CURLOPT_USERPWD, login)
        _ = vault_curl_set_long(h, CURLOPT_HTTPAUTH, vault_curl_auth_basic())
        _ = vault_curl_set_long(h, CURLOPT_NOSIGNAL, 1)
        _ = vault_curl_set_long(h, CURLOPT_CONNECTTIMEOUT, 10)
        // A stalled answer fails in bounded time, as rclone's own runs do.
        _ = vault_curl_set_long(h, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = vault_curl_set_long(h, CURLOPT_LOW_SPEED_TIME, 60)
        _ = vault_curl_set_write(h, { data, size, count, context in
            let b = Unmanaged<AnswerBox>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            if let s = b.streaming { return b.pass(UnsafeRawBufferPointer(start: data, count: n), to: s) ? n : 0 }
            guard b.answer.body.count + n <= b.answer.limit else { b.answer.overflow = true; return 0 }
            b.answer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
            return n
        })
        _ = vault_curl_set_header(h, { data, size, count, context in
            let b = Unmanaged<AnswerBox>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            guard b.answer.headers.count + n <= 1 << 16 else { b.answer.overflow = true; return 0 }
            b.answer.headers.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
            return n
        })
        return Handle(pointer: h)
    }

    private func give(_ h: Handle) {
        let keep = spare.withLock { s -> Bool in
            guard s.count < Self.kept else { return false }
            s.append(h)
            return true
        }
        if !keep { vault_curl_easy_cleanup(h.pointer) }
    }
}

/// One answer being received (libcurl's callbacks fill it).
final class AnswerBox {
    var answer: HTTPRange.Answer
    /// A streamed answer's receiver: `begin` sees the headers before the
    /// first byte of the body (false: refuse it), `take` the body.
    struct Streaming {
        let begin: (HTTPRange.Answer) -> Bool
        let take: (UnsafeRawBufferPointer) -> Bool
    }
    let streaming: Streaming?
    private var begun = false
    /// The receiver stopped the transfer (not a wrong answer).
    private(set) var stopped = false

    init(limit: Int, streaming: Streaming? = nil) {
        answer = HTTPRange.Answer(limit: limit)
        self.streaming = streaming
        // The whole answer's room at once (limit is bounded by maxAnswer):
        // growing it as libcurl hands over 16 KiB at a time copied each
        // answer about twice more, every time onto fresh pages.
        if streaming == nil { answer.body.reserveCapacity(limit) }
    }

    /// Hands a streamed body's bytes on; false stops the transfer. The
    /// headers are all in by the first call: a status other than 206 or a
    /// wrong range is refused before a byte is passed.
    func pass(_ bytes: UnsafeRawBufferPointer, to s: Streaming) -> Bool {
        if !begun {
            // Another status's body (404's text) is dropped, a little of
            // it: exchange() then answers for the status.
            guard answer.status == 206 else {
                answer.streamed += UInt64(bytes.count)
                return answer.streamed <= 1 << 16
            }
            guard s.begin(answer) else { answer.overflow = true; return false }
            begun = true
        }
        answer.streamed += UInt64(bytes.count)
        if !s.take(bytes) { stopped = true; return false }
        return true
    }
}

import CCurl

/// A notification of a profile's run (`vault run`): an HTTP GET of a URL,
/// the healthchecks.io way (URL/start, then URL/EXITCODE), or a POST of a
/// message, ntfy's way. It reports
/// whether the server answered 2xx; a ping that fails never fails a backup,
/// so nothing here throws. Ten seconds at most, redirects not followed,
/// the answer's body not read past 64 KiB.
public enum HTTPPing {
    /// nil when it worked; else why not, for a warning.
    public static func get(_ url: String) -> String? { request(url, body: nil, headers: []) }

    /// A POST of `body` (an ntfy-style message: the body is the text,
    /// headers such as "Title: ..." and "Priority: high").
    public static func post(_ url: String, body: String, headers: [String]) -> String? { request(url, body: body, headers: headers) }

    private static func request(_ url: String, body: String?, headers: [String]) -> String? {
        guard vault_curl_load() == 1 else { return String(cString: vault_curl_easy_strerror(CURLE_FAILED_INIT)) }
        guard let h = vault_curl_easy_init() else { return "libcurl would not start" }
        defer { vault_curl_easy_cleanup(h) }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers { list = vault_curl_slist_append(list, header) }
        defer { vault_curl_slist_free_all(list) }
        if let list { _ = vault_curl_set_pointer(h, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)) }
        // COPYPOSTFIELDS: libcurl keeps its own copy of the body.
        if let body { _ = vault_curl_set_string(h, CURLOPT_COPYPOSTFIELDS, body) }
        _ = vault_curl_set_string(h, CURLOPT_URL, url)
        _ = vault_curl_set_long(h, CURLOPT_TIMEOUT, 10)
        _ = vault_curl_set_long(h, CURLOPT_NOSIGNAL, 1)
        _ = vault_curl_set_long(h, CURLOPT_MAXFILESIZE, 64 << 10)
        _ = vault_curl_set_write(h) { _, size, count, _ in size * count }
        let rc = vault_curl_easy_perform(h)
        guard rc == CURLE_OK else { return String(cString: vault_curl_easy_strerror(rc)) }
        var code = 0
        _ = vault_curl_response_code(h, &code)
        return (200..<300).contains(code) ? nil : "the server answered \(code)"
    }
}

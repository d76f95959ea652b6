import FoundationEssentials

/// The rules for a transfer's method and header fields, and which headers are secrets.
public enum TransferHeaderRules {
    /// The most header fields one transfer carries.
    public static let maximumCount = 64
    /// The longest value of one field, in bytes (UTF-8).
    public static let maximumValueBytes = 8 * 1024
    /// The most bytes of all names and values together.
    public static let maximumTotalBytes = 32 * 1024
    /// The longest field name, in bytes.
    public static let maximumNameBytes = 256

    /// The methods a download may use (the response body is the downloaded file).
    public static let downloadMethods = ["GET", "POST"]
    /// The methods an upload may use (the file is the request body); `PUT` when none is given.
    public static let uploadMethods = ["PUT", "POST", "PATCH"]

    /// Always secret, whatever the request says: never shown, dropped on a redirect to another origin.
    public static let alwaysSecret: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// Fields the engine itself sets per attempt (framing, resume, connection): an app's own
    /// value would contradict them.
    public static let reserved: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade",
        "expect", "range", "if-range", "accept-encoding",
    ]

    /// Whether `name` is a secret for a transfer that also named `secretNames` (case-insensitive).
    public static func isSecret(_ name: String, secretNames: [String]?) -> Bool {
        let lowered = name.lowercased()
        return alwaysSecret.contains(lowered) || (secretNames ?? []).contains { $0.lowercased() == lowered }
    }

    /// `headers` with every secret value replaced by ``TransferHeader/redactedValue``.
    public static func redacted(_ headers: [TransferHeader], secretNames: [String]?) -> [TransferHeader] {
        headers.map { isSecret($0.name, secretNames: secretNames) ? TransferHeader(name: $0.name, value: TransferHeader.redactedValue) : $0 }
    }

    /// RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The problem with a field name, or `nil`. RFC 9110 §5.1: a field name is a token.
    public static func problem(name: String) -> String? {
        guard !name.isEmpty else { return "a header needs a name before the ':'" }
        guard name.utf8.count <= maximumNameBytes else { return "header name is longer than \(maximumNameBytes) bytes" }
        guard isToken(name) else {
            return "header name '\(printable(name))' is not an RFC 9110 token (letters, digits and !#$%&'*+-.^_`|~ only)"
        }
        guard !reserved.contains(name.lowercased()) else { return "header \(name) is set by the scheduler, not by a request" }
        return nil
    }

    /// The problem with a field value, or `nil`. The value is never printed (it may be a secret).
    /// RFC 9110 §5.5: field-value = *field-content, visible characters, SP and HTAB (and obs-text);
    /// CR, LF and NUL are never allowed.
    public static func problem(value: String, name: String) -> String? {
        let bytes = value.utf8
        guard bytes.count <= maximumValueBytes else {
            return "header \(printable(name)) is \(bytes.count) bytes; a value may have at most \(maximumValueBytes)"
        }
        if bytes.contains(0x0D) || bytes.contains(0x0A) { return "header \(printable(name)) contains a line break (CR or LF)" }
        if bytes.contains(0) { return "header \(printable(name)) contains a NUL byte" }
        guard bytes.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            return "header \(printable(name)) contains a control character (RFC 9110 §5.5)"
        }
        if let first = bytes.first, first == 0x20 || first == 0x09 {
            return "header \(printable(name)) starts with a space (RFC 9110 §5.5)"
        }
        if let last = bytes.last, last == 0x20 || last == 0x09 { return "header \(printable(name)) ends with a space (RFC 9110 §5.5)" }
        return nil
    }

    /// The first problem with a list of fields, or `nil`.
    public static func problem(headers: [TransferHeader]) -> String? {
        guard headers.count <= maximumCount else { return "\(headers.count) headers; a transfer may carry at most \(maximumCount)" }
        var total = 0
        for header in headers {
            if let problem = problem(name: header.name) ?? problem(value: header.value, name: header.name) { return problem }
            total += header.name.utf8.count + header.value.utf8.count
        }
        guard total <= maximumTotalBytes else { return "the headers are \(total) bytes together; at most \(maximumTotalBytes)" }
        return nil
    }

    /// The problem with the names given as secret (`--secret-header`), or `nil`.
    public static func problem(secretNames: [String]) -> String? {
        guard secretNames.count <= maximumCount else { return "\(secretNames.count) secret header names; at most \(maximumCount)" }
        for name in secretNames {
            guard !name.isEmpty, name.utf8.count <= maximumNameBytes, isToken(name) else {
                return "secret header name '\(printable(name))' is not an RFC 9110 token"
            }
        }
        return nil
    }

    /// The problem with `method` for a transfer in `direction`, or `nil`.
    public static func problem(method: String, direction: TransferRecord.Direction) -> String? {
        let allowed = direction == .download ? downloadMethods : uploadMethods
        guard allowed.contains(method) else {
            return "method '\(printable(method))' is not one a\(direction == .upload ? "n" : "") \(direction.rawValue) may use (\(allowed.joined(separator: ", ")))"
        }
        return nil
    }

    /// The first problem with a request's method, headers and secret names, or `nil`.
    public static func problem(method: String?, headers: [TransferHeader]?, secretNames: [String]?,
                               direction: TransferRecord.Direction) -> String? {
        if let method, let problem = problem(method: method, direction: direction) { return problem }
        if let headers, let problem = problem(headers: headers) { return problem }
        if let secretNames, let problem = problem(secretNames: secretNames) { return problem }
        return nil
    }

    /// A name as it may be printed: short, with control characters escaped.
    static func printable(_ text: String) -> String {
        let shown = text.unicodeScalars.prefix(64).map { scalar in
            scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
        return text.unicodeScalars.count > 64 ? shown + "…" : shown
    }
}

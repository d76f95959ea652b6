#if canImport(TransferCore)
// In the test target; `Scripts/fuzz` compiles this file into one module with TransferCore's sources.
@testable import TransferCore
#endif

/// The bodies of the libFuzzer targets (`Scripts/fuzz`), shared with the test that replays the
/// seed corpus (`FuzzCorpusTests`). Each parses hostile bytes and checks what must always hold:
/// a `precondition` failure is a crash the fuzzer reports.
enum FuzzTargets {
    /// Every target, by the name of its corpus folder under `Fuzz/corpus/`.
    static let all: [String: @Sendable ([UInt8]) -> Void] = [
        "content-range": contentRange,
        "entity-tag": entityTag,
        "retry-after": retryAfter,
        "response-head": responseHead,
        "redirect": redirect,
    ]

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static func contentRange(_ bytes: [UInt8]) {
        guard let range = ContentRange(text(bytes)) else { return }
        if let first = range.first, let last = range.last {
            precondition(first >= 0 && last >= first, "a parsed range is ordered")
            precondition(range.length.map { $0 >= 1 } == true, "a parsed range is not empty")
            if let total = range.total { precondition(last < total, "a parsed range lies inside its total") }
        } else {
            precondition(range.total != nil, "the unsatisfied form names a length")
        }
    }

    static func entityTag(_ bytes: [UInt8]) {
        let value = text(bytes)
        if let tag = EntityTag(value) {
            precondition(EntityTag(tag.description) == tag, "an entity tag survives being written out")
            precondition(tag.strongMatch(tag) == !tag.isWeak, "only a strong tag matches strongly")
        }
        let validator = ResumeValidator(etag: value, lastModified: value)
        if let ifRange = validator.ifRangeValue {
            precondition(EntityTag(ifRange)?.isWeak == false, "If-Range is only ever a strong tag (§13.1.5)")
        }
        if case .resume(let from, let ifRange) = DownloadRules.start(heldBytes: 100, validator: validator) {
            precondition(from == 100 && ifRange == validator.ifRangeValue, "a resume asks for the rest with the strong tag")
        }
    }

    static func retryAfter(_ bytes: [UInt8]) {
        let value = text(bytes)
        if let seconds = RetryAfter.seconds(value, now: 1_800_000_000) {
            precondition(seconds >= 0 && seconds <= RetryAfter.maximumSeconds, "a wait is between 0 and a day")
        }
        if let date = HTTPDate.parse(value) {
            precondition(HTTPDate.parse(HTTPDate.format(date)) == date, "a parsed date survives being written out")
        }
    }

    /// The input is a response head: a status line (`206`) and then `Name: value` lines.
    static func responseHead(_ bytes: [UInt8]) {
        let lines = text(bytes).split(separator: "\n", omittingEmptySubsequences: false)
        guard let statusLine = lines.first, let status = Int(statusLine.prefix(3)) else { return }
        let fields = lines.dropFirst().compactMap { line -> ResponseHead.Field? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return ResponseHead.Field(String(line[..<colon]), String(line[line.index(after: colon)...]))
        }
        let head = ResponseHead(status: status, fields: fields)
        let held = ResumeValidator(etag: "\"v1\"")
        for rangeStart in [nil, Int64(100)] {
            let step = DownloadRules.step(for: head, rangeStart: rangeStart, held: rangeStart == nil ? nil : held, now: 1_800_000_000)
            switch step {
            case .receive(let body):
                switch body.placement {
                case .append(let offset):
                    // §15.3.7.3: only a 206 for the asked range, with the held strong tag, is appended.
                    precondition(head.status == 206 && offset == rangeStart, "only a 206 for the asked range is appended")
                    precondition(EntityTag(head.first("ETag"))?.strongMatch(held.strongTag!) == true, "appended parts share a strong tag")
                    precondition(body.length.map { $0 >= 1 } == true, "an appended part has a fixed length")
                    if let total = body.total, let length = body.length { precondition(offset + length <= total, "a part ends inside its total") }
                    _ = DownloadRules.afterBody(body, held: offset + (body.length ?? 0))
                case .replace:
                    precondition(head.status == 200, "only a 200 replaces the held bytes")
                    precondition(body.length.map { $0 >= 0 } ?? true, "a length is never negative")
                }
            case .complete:
                precondition(head.status == 416 && rangeStart != nil, "only a 416 to a range request proves completion")
            case .restart:
                precondition(rangeStart != nil, "only the answer to a range request restarts")
            case .redirect(let status, let location):
                precondition([301, 302, 303, 307, 308].contains(status) && !location.isEmpty, "only redirects with a target")
            case .fail(let failure):
                if case .httpStatus(_, let wait?) = failure { precondition(wait >= 0 && wait <= RetryAfter.maximumSeconds, "waits are bounded") }
            }
        }
        // Asking whether a body ended by a close was whole never replaces the held bytes.
        if case .receive(let body) = DownloadRules.step(for: head, rangeStart: 100, held: held, now: 1_800_000_000, probing: true) {
            guard case .append(let offset) = body.placement else { preconditionFailure("a probe never replaces the held bytes") }
            precondition(offset == 100 && head.status == 206, "a probe appends only a 206 for what follows")
        }
    }

    static func redirect(_ bytes: [UInt8]) {
        var trail = RedirectTrail(url: "http://127.0.0.1:8000/a/b?c=d", method: "PUT")
        for location in text(bytes).split(separator: "\n", omittingEmptySubsequences: false).prefix(RedirectTrail.maximumHops + 2) {
            guard case .success(let hop) = trail.follow(status: 307, location: String(location)) else { return }
            let scheme = hop.url.prefix(while: { $0 != ":" }).lowercased()
            precondition(scheme == "http" || scheme == "https", "redirects stay on http(s)")
            precondition(hop.method == "PUT" && hop.sendsBody, "a 307 repeats the method and the body")
        }
    }
}

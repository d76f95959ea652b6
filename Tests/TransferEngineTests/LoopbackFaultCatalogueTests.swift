import Foundation
import LoopbackServer
import Testing

extension LoopbackServerTests {
    /// Each catalogue case, played by a raw client that resumes the simple way: a `Range` from
    /// what it has, with `If-Range` naming the validator it was given.
    @Suite("Loopback fault catalogue")
    struct CatalogueTests {
        static let size: Int64 = 10_000
        static let seed: UInt64 = 9
        static let dropAt: Int64 = 3_000
        static let path = "/downloads/file.bin"

        @Test("every case has its own summary, and the representations a download may end with")
        func descriptions() {
            let summaries = FaultCase.allCases.map(\.summary)
            #expect(summaries.allSatisfy { !$0.isEmpty })
            #expect(Set(summaries).count == FaultCase.allCases.count)
            for fault in FaultCase.allCases {
                let expected: [UInt64] = switch fault {
                case .changedEntityIgnoringIfRange: [9, 10]
                case .redirectLoop: []
                default: [9]
                }
                #expect(fault.acceptableSeeds(seed: 9) == expected, "\(fault)")
                let routes = fault.routes(path: Self.path, size: Self.size, seed: Self.seed, dropAt: Self.dropAt)
                #expect(routes[Self.path] == fault.route(size: Self.size, seed: Self.seed, dropAt: Self.dropAt)
                        || fault == .tooManyRequestsRetryAfterDate, "\(fault)")
                let redirects = [FaultCase.redirectChain, .redirectLoop, .redirectRelative].contains(fault)
                #expect((routes.count > 1) == redirects, "\(fault)")
            }
        }

        @Test("each case plays out on the wire as its summary says", arguments: FaultCase.allCases)
        func playsOut(_ fault: FaultCase) async throws {
            let builtAt = Date()
            let routes = fault.routes(path: Self.path, size: Self.size, seed: Self.seed, dropAt: Self.dropAt)
            let entity = GeneratedBytes(size: Self.size, seed: Self.seed)
            let all = entity.bytes(0..<Self.size)
            let rest = entity.bytes(Self.dropAt..<Self.size)
            try await withLoopback(routes) { server in
                let client = ResumingClient(port: server.port, path: Self.path)
                switch fault {
                case .clean:
                    let whole = try await client.get()
                    #expect(whole.status == 200)
                    #expect(whole.body == all)
                case .dropAtByte, .slowDrip:
                    let first = try await client.firstAttemptDropped(entity)
                    let second = try await client.resume(after: first)
                    #expect(second.status == 206)
                    #expect(second.header("Content-Range") == "bytes 3000-9999/10000")
                    #expect(second.body == rest)
                case .lyingContentLength:
                    let first = try await client.get()
                    #expect(first.header("Content-Length") == "12500")
                    #expect(first.body == all)
                    #expect(first.closed)
                    let second = try await client.resume(after: first)
                    #expect(second.status == 416)
                    #expect(second.header("Content-Range") == "bytes */10000")
                case .rangeIgnored:
                    let second = try await client.resume(after: client.firstAttemptDropped(entity))
                    #expect(second.status == 200)
                    #expect(second.header("Content-Range") == nil)
                    #expect(second.body == all)
                case .rangeBodyTooLong:
                    let second = try await client.resume(after: client.firstAttemptDropped(entity))
                    #expect(second.status == 206)
                    #expect(second.header("Content-Range") == "bytes 3000-9999/10000")
                    #expect(second.header("Content-Length") == "7100")
                    #expect(second.body.count == 7100)
                    #expect(Array(second.body.prefix(7000)) == rest)
                case .unknownTotalEndsEarly:
                    let first = try await client.firstAttemptDropped(entity)
                    let second = try await client.resume(after: first)
                    #expect(second.status == 206)
                    #expect(second.header("Content-Range") == "bytes 3000-9999/*")
                    #expect(second.header("Content-Length") == nil)
                    #expect(second.header("Connection") == "close")
                    #expect(second.closed)
                    #expect(second.body == entity.bytes(3000..<6500))
                    let third = try await client.get(headers: [("Range", "bytes=6500-"), ("If-Range", first.header("ETag") ?? "")])
                    #expect(third.header("Content-Range") == "bytes 6500-9999/10000")
                    #expect(third.body == entity.bytes(6500..<10000))
                case .closeDelimitedEndsEarly:
                    let first = try await client.get()
                    #expect(first.status == 200)
                    #expect(first.header("Content-Length") == nil)
                    #expect(first.header("Connection") == "close")
                    #expect(first.closed)
                    #expect(first.body == entity.bytes(0..<Self.dropAt), "cut short, and nothing on the wire says so")
                    let second = try await client.resume(after: first)
                    #expect(second.status == 206)
                    #expect(second.body == rest)
                case .changedEntityIgnoringIfRange:
                    let first = try await client.firstAttemptDropped(entity)
                    let second = try await client.resume(after: first)
                    let changed = GeneratedBytes(size: Self.size, seed: Self.seed + 1)
                    #expect(second.status == 206)
                    #expect(second.header("ETag") != first.header("ETag"))
                    #expect(second.body == changed.bytes(3000..<10000))
                    let third = try await client.get()
                    #expect(third.status == 200)
                    #expect(third.header("ETag") == second.header("ETag"))
                    #expect(third.body == changed.bytes(0..<10000))
                case .weakETag:
                    let first = try await client.firstAttemptDropped(entity)
                    #expect(first.header("ETag")?.hasPrefix("W/\"") == true)
                    #expect(first.header("Last-Modified") != nil)
                    let second = try await client.resume(after: first)
                    #expect(second.status == 200)
                    #expect(second.body == all)
                case .lastModifiedOnly:
                    let first = try await client.firstAttemptDropped(entity)
                    #expect(first.header("ETag") == nil)
                    #expect(first.header("Last-Modified") != nil)
                    let second = try await client.resume(after: first)
                    #expect(second.status == 206)
                    #expect(second.body == rest)
                case .noValidator:
                    let first = try await client.firstAttemptDropped(entity)
                    #expect(first.header("ETag") == nil)
                    #expect(first.header("Last-Modified") == nil)
                    let second = try await client.resume(after: first)
                    #expect(second.status == 206)
                    #expect(second.body == rest)
                case .noContentOnResume, .otherSuccessOnResume:
                    let first = try await client.firstAttemptDropped(entity)
                    let second = try await client.resume(after: first)
                    #expect(second.status == (fault == .noContentOnResume ? 204 : 202))
                    #expect(second.body.isEmpty)
                    #expect(try await client.resume(after: first).status == 206)
                case .gzipOnRange:
                    let second = try await client.resume(after: client.firstAttemptDropped(entity))
                    #expect(second.status == 206)
                    #expect(second.header("Content-Encoding") == "gzip")
                    #expect(second.body.count == rest.count)
                    #expect(second.body != rest)
                case .unsatisfiableWithLength, .unsatisfiableWithoutLength:
                    let second = try await client.resume(after: client.firstAttemptDropped(entity))
                    #expect(second.status == 416)
                    #expect(second.header("Content-Range") == (fault == .unsatisfiableWithLength ? "bytes */10000" : nil))
                    #expect(second.body.isEmpty)
                case .serviceUnavailableRetryAfter:
                    let first = try await client.get()
                    #expect(first.status == 503)
                    #expect(first.header("Retry-After") == "1")
                    #expect(try await client.get().body == all)
                case .tooManyRequestsRetryAfterDate:
                    let first = try await client.get()
                    #expect(first.status == 429)
                    let date = try #require(first.header("Retry-After").flatMap(httpDate))
                    #expect((0.9...2.5).contains(date.timeIntervalSince(builtAt)), "\(date) vs \(builtAt)")
                    #expect(try await client.get().body == all)
                case .redirectChain:
                    let (statuses, last) = try await client.followRedirects()
                    #expect(statuses == [301, 302, 307, 308, 200])
                    #expect(last.body == all)
                case .redirectLoop:
                    let (statuses, last) = try await client.followRedirects()
                    #expect(statuses == [302, 302])
                    #expect(last.header("Location") == Self.path)
                case .redirectRelative:
                    let first = try await client.get()
                    let location = try #require(first.header("Location"))
                    #expect(!location.hasPrefix("/") && !location.contains(":"))
                    let (statuses, last) = try await client.followRedirects()
                    #expect(statuses == [302, 200])
                    #expect(last.body == all)
                }
            }
        }
    }
}

/// A client that downloads one path the simple way, so that each fault shows on the wire.
private struct ResumingClient {
    let port: Int
    let path: String

    func get(_ target: String? = nil, headers: [(String, String)] = []) async throws -> RawResponse {
        try await rawRequest(port: port, target ?? path, headers: headers)
    }

    /// The first request, checked to be a `200` cut after `dropAt` bytes.
    func firstAttemptDropped(_ entity: GeneratedBytes) async throws -> RawResponse {
        let first = try await get()
        #expect(first.status == 200)
        #expect(first.closed)
        #expect(first.body == entity.bytes(0..<LoopbackServerTests.CatalogueTests.dropAt))
        return first
    }

    /// A range request from the end of what `first` delivered, with `If-Range` naming its ETag
    /// (else its Last-Modified) when it had one.
    func resume(after first: RawResponse) async throws -> RawResponse {
        var headers = [("Range", "bytes=\(first.body.count)-")]
        if let validator = first.header("ETag") ?? first.header("Last-Modified") { headers.append(("If-Range", validator)) }
        return try await get(headers: headers)
    }

    /// Follows `Location` (resolved against the request's URL) until an answer that is not a
    /// redirect or a path seen before; returns every status and the last response.
    func followRedirects() async throws -> (statuses: [Int], last: RawResponse) {
        var target = path
        var seen: Set<String> = []
        var statuses: [Int] = []
        while true {
            seen.insert(target)
            let response = try await get(target)
            statuses.append(response.status)
            guard (300..<400).contains(response.status), let location = response.header("Location"),
                  let base = URL(string: "http://127.0.0.1:\(port)\(target)"),
                  let next = URL(string: location, relativeTo: base)?.absoluteURL else {
                return (statuses, response)
            }
            let nextTarget = next.path + (next.query.map { "?" + $0 } ?? "")
            if seen.contains(nextTarget) { return (statuses, response) }
            target = nextTarget
        }
    }
}

/// An IMF-fixdate such as `Sun, 22 Nov 2026 10:00:00 GMT`.
private func httpDate(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.date(from: text)
}

#if canImport(Glibc)
import Glibc
#endif

/// A way real servers and proxies misbehave during a download, ready to serve.
///
/// Each case builds the routes that play it out over a ``Route/Content/generated(size:seed:)``
/// entity, and says which representations a finished download may hold
/// (``acceptableSeeds(seed:)``): a client that reports success must have written exactly one
/// whole acceptable representation; anything else is wrong bytes reported as success.
///
/// ```swift
/// for fault in FaultCase.allCases {
///     for (path, route) in fault.routes(path: "/\(fault)", size: size, seed: 7, dropAt: size / 3) {
///         server.setRoute(path, route)
///     }
///     // download server.url("/\(fault)"), then compare with GeneratedBytes(size: size, seed: s)
///     // for each s in fault.acceptableSeeds(seed: 7); no seed at all means it must fail.
/// }
/// ```
///
/// Where a case breaks a first attempt mid-body, it does so after `dropAt` bytes (1..<size), so
/// the next request is a resume.
public enum FaultCase: String, CaseIterable, Sendable {
    case clean
    case dropAtByte
    case slowDrip
    case lyingContentLength
    case rangeIgnored
    case rangeBodyTooLong
    case unknownTotalEndsEarly
    case closeDelimitedEndsEarly
    case changedEntityIgnoringIfRange
    case weakETag
    case lastModifiedOnly
    case noValidator
    case noContentOnResume
    case otherSuccessOnResume
    case gzipOnRange
    case unsatisfiableWithLength
    case unsatisfiableWithoutLength
    case serviceUnavailableRetryAfter
    case tooManyRequestsRetryAfterDate
    case redirectChain
    case redirectLoop
    case redirectRelative

    /// What the server does, in one line.
    public var summary: String {
        switch self {
        case .clean: "no fault"
        case .dropAtByte: "the first response closes after dropAt bytes; later ones are clean"
        case .slowDrip: "a slow body (about two seconds for the whole entity) that first closes after dropAt bytes"
        case .lyingContentLength: "the first response announces a quarter more than the entity in Content-Length, sends the entity, and closes"
        case .rangeIgnored: "a drop, then 200 with the whole entity to the range request"
        case .rangeBodyTooLong: "a drop, then a 206 whose body runs 100 bytes past its Content-Range"
        case .unknownTotalEndsEarly: "a drop, then a 206 'N-M/*' without Content-Length, cut short by a close that looks like its end"
        case .closeDelimitedEndsEarly: "a 200 without Content-Length (ended by closing), cut short after dropAt bytes by a close that looks like its end"
        case .changedEntityIgnoringIfRange: "a drop, then the entity changes (seed + 1) and the resume gets a 206 of the new bytes despite If-Range"
        case .weakETag: "a weak ETag (never matches If-Range) and Last-Modified; a drop, then a resume"
        case .lastModifiedOnly: "Last-Modified and no ETag; a drop, then a resume"
        case .noValidator: "neither ETag nor Last-Modified; a drop, then a resume"
        case .noContentOnResume: "a drop, then 204 No Content with an empty body to the range request"
        case .otherSuccessOnResume: "a drop, then 202 Accepted with an empty body to the range request"
        case .gzipOnRange: "a drop, then a 206 with Content-Encoding: gzip and a body that is not the entity's bytes"
        case .unsatisfiableWithLength: "a drop, then 416 with Content-Range: bytes */size to the range request"
        case .unsatisfiableWithoutLength: "a drop, then 416 without Content-Range to the range request"
        case .serviceUnavailableRetryAfter: "503 with Retry-After: 1, then clean"
        case .tooManyRequestsRetryAfterDate: "429 with Retry-After an HTTP-date 1-2 s after the route was built, then clean"
        case .redirectChain: "301, 302, 307 and 308 in turn, then the entity"
        case .redirectLoop: "302 to another path that answers 302 back, for ever"
        case .redirectRelative: "302 with a relative Location (a sibling path), then the entity"
        }
    }

    /// The route at the download's own path. Redirect cases point at the paths of
    /// ``extraRoutes(path:size:seed:)``, which must be served too (``routes(path:size:seed:dropAt:)``
    /// gives all of them).
    public func route(size: Int64, seed: UInt64, dropAt: Int64) -> Route {
        let content = Route.Content.generated(size: size, seed: seed)
        let drop = Faults(dropAfter: dropAt)
        switch self {
        case .clean:
            return Route(content)
        case .dropAtByte:
            return Route(content, nextRequests: [drop])
        case .slowDrip:
            let rate = Int(Swift.max(16_384, size / 2))
            return Route(content, faults: Faults(bytesPerSecond: rate),
                         nextRequests: [Faults(bytesPerSecond: rate, dropAfter: dropAt)])
        case .lyingContentLength:
            return Route(content, nextRequests: [Faults(extraAnnouncedLength: Swift.max(1, size / 4))])
        case .rangeIgnored:
            return Route(content, nextRequests: [drop, Faults(ignoreRange: true)])
        case .rangeBodyTooLong:
            return Route(content, nextRequests: [drop, Faults(rangeBodyExtra: 100)])
        case .unknownTotalEndsEarly:
            let cut = Faults(dropAfter: (size - dropAt) / 2, unknownTotal: true, omitContentLength: true)
            return Route(content, nextRequests: [drop, cut])
        case .closeDelimitedEndsEarly:
            return Route(content, nextRequests: [Faults(dropAfter: dropAt, omitContentLength: true)])
        case .changedEntityIgnoringIfRange:
            return Route(content, faults: Faults(generation: 1),
                         nextRequests: [drop, Faults(ignoreIfRange: true, generation: 1)])
        case .weakETag:
            return validatorCase(content, .weak, dropAt: dropAt)
        case .lastModifiedOnly:
            return validatorCase(content, .lastModifiedOnly, dropAt: dropAt)
        case .noValidator:
            return validatorCase(content, .none, dropAt: dropAt)
        case .noContentOnResume:
            return Route(content, nextRequests: [drop, Faults(statusForRangeRequests: 204)])
        case .otherSuccessOnResume:
            return Route(content, nextRequests: [drop, Faults(statusForRangeRequests: 202)])
        case .gzipOnRange:
            return Route(content, nextRequests: [drop, Faults(contentEncodingOnRange: "gzip")])
        case .unsatisfiableWithLength:
            return Route(content, nextRequests: [drop, Faults(unsatisfiable: .withLength)])
        case .unsatisfiableWithoutLength:
            return Route(content, nextRequests: [drop, Faults(unsatisfiable: .withoutLength)])
        case .serviceUnavailableRetryAfter:
            return Route(content, nextRequests: [Faults(status: 503, retryAfter: "1")])
        case .tooManyRequestsRetryAfterDate:
            // Whole seconds: a date only 1 s ahead could be due already when it arrives.
            let due = ServedEntity.httpDate(Int(time(nil)) + 2)
            return Route(content, nextRequests: [Faults(status: 429, retryAfter: due)])
        case .redirectChain:
            return Route(.redirect(status: 301, location: hopPath(1, size: size, seed: seed)))
        case .redirectLoop:
            return Route(.redirect(status: 302, location: hopPath(1, size: size, seed: seed)))
        case .redirectRelative:
            return Route(.redirect(status: 302, location: relativeTarget(size: size, seed: seed)))
        }
    }

    /// The routes besides the one at `path` that the case needs: the redirect hops and targets
    /// (empty for cases without redirects).
    ///
    /// Their paths depend on the case, `size` and `seed`, not on `path` (except the sibling a
    /// relative redirect names), so two downloads of the same case share them harmlessly: they
    /// keep no per-request faults.
    public func extraRoutes(path: String, size: Int64, seed: UInt64) -> [String: Route] {
        let content = Route(.generated(size: size, seed: seed))
        switch self {
        case .redirectChain:
            return [
                hopPath(1, size: size, seed: seed): Route(.redirect(status: 302, location: hopPath(2, size: size, seed: seed))),
                hopPath(2, size: size, seed: seed): Route(.redirect(status: 307, location: hopPath(3, size: size, seed: seed))),
                hopPath(3, size: size, seed: seed): Route(.redirect(status: 308, location: hopPath(4, size: size, seed: seed))),
                hopPath(4, size: size, seed: seed): content,
            ]
        case .redirectLoop:
            return [hopPath(1, size: size, seed: seed): Route(.redirect(status: 302, location: path))]
        case .redirectRelative:
            let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
            return [directory + relativeTarget(size: size, seed: seed): content]
        default:
            return [:]
        }
    }

    /// Every route the case needs, keyed by path: ``route(size:seed:dropAt:)`` at `path` and the
    /// ``extraRoutes(path:size:seed:)``.
    public func routes(path: String, size: Int64, seed: UInt64, dropAt: Int64) -> [String: Route] {
        var routes = extraRoutes(path: path, size: size, seed: seed)
        routes[path] = route(size: size, seed: seed, dropAt: dropAt)
        return routes
    }

    /// The seeds of the representations (``GeneratedBytes`` of the given size) a download of this
    /// case may finish with; empty when it must fail (a redirect loop).
    public func acceptableSeeds(seed: UInt64) -> [UInt64] {
        switch self {
        case .changedEntityIgnoringIfRange: [seed, seed &+ 1]
        case .redirectLoop: []
        default: [seed]
        }
    }

    /// A first attempt that breaks at `dropAt`, then resumes, all under one validator mode.
    private func validatorCase(_ content: Route.Content, _ mode: Faults.ETagMode, dropAt: Int64) -> Route {
        Route(content, faults: Faults(etag: mode), nextRequests: [Faults(dropAfter: dropAt, etag: mode)])
    }

    /// The path of a redirect hop or target of this case.
    private func hopPath(_ hop: Int, size: Int64, seed: UInt64) -> String {
        "/fault-catalogue/\(rawValue)/\(size)-\(seed)/r\(hop)"
    }

    /// A relative reference (a sibling of the download's path) naming the target.
    private func relativeTarget(size: Int64, seed: UInt64) -> String {
        "\(rawValue)-\(size)-\(seed)-target"
    }
}

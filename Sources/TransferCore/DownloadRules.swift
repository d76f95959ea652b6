/// The rules a download follows, as pure functions of what was asked, what came back and what is
/// held: when held bytes may be resumed, what a response means for them, and when the whole
/// representation has arrived. The attempt that moves the bytes only carries these out.
public enum DownloadRules {
    /// How an attempt begins with `heldBytes` of partial data recorded with `validator`.
    public enum Start: Hashable, Sendable {
        /// Ask for the rest: `Range: bytes=<from>-` with `If-Range: <ifRange>`.
        case resume(from: Int64, ifRange: String)
        /// Ask for the whole representation; `discard` says why held bytes (if any) are dropped.
        case fromStart(discard: String?)
    }

    public static func start(heldBytes: Int64, validator: ResumeValidator?) -> Start {
        guard heldBytes > 0 else { return .fromStart(discard: nil) }
        guard let validator else {
            return .fromStart(discard: "the partial data has no recorded validator")
        }
        // §13.1.5: If-Range only with a strong entity tag; anything else cannot prove sameness.
        guard let ifRange = validator.ifRangeValue else {
            return .fromStart(discard: "the partial data cannot be resumed: \(validator.whyNotResumable ?? "no strong ETag")")
        }
        return .resume(from: heldBytes, ifRange: ifRange)
    }

    /// Where the body of a response goes, and how long it must be.
    public struct Body: Hashable, Sendable {
        public enum Placement: Hashable, Sendable {
            /// After the held bytes, which are `offset` long (a `206` for the rest).
            case append(offset: Int64)
            /// In place of any held bytes: a new representation from byte 0 (a `200`).
            case replace(ResumeValidator)
        }

        public var placement: Placement
        /// Exactly how many body bytes this response must carry; `nil` when only the end of the
        /// message says (chunked, or close-delimited without `Content-Length`).
        public var length: Int64?
        /// The whole representation's length, when known.
        public var total: Int64?
        /// The body has no declared length and ends when the server closes the connection
        /// (RFC 9112 §6.3 rule 8), so a cut connection looks like its end.
        public var endsAtClose: Bool

        public init(placement: Placement, length: Int64?, total: Int64?, endsAtClose: Bool = false) {
            self.placement = placement
            self.length = length
            self.total = total
            self.endsAtClose = endsAtClose
        }
    }

    /// What a response head means for the download.
    public enum Step: Hashable, Sendable {
        /// Take the body as ``Body`` says.
        case receive(Body)
        /// Follow the redirect to `location` (resolve it with ``RedirectTrail``).
        case redirect(status: Int, location: String)
        /// The held bytes are already the whole representation (a `416` that proves it).
        case complete
        /// The held bytes cannot be combined with what the server sends: drop them and ask for
        /// the whole representation again, without `Range`.
        case restart(reason: String)
        case fail(TransferFailure)
    }

    /// The meaning of `head`, the answer to a request that asked for the rest from `rangeStart`
    /// (with `If-Range` = `held`'s strong tag) or, with `rangeStart` `nil`, for everything.
    /// `now` (seconds since the epoch) turns a `Retry-After` date into a delay.
    ///
    /// `probing` says the request asks whether a body that ended at a close was whole (see
    /// ``AfterBody/probeFrom(_:)``): then only a `206` of more bytes or a `416` can say anything,
    /// a transient failure is tried again later, and any other answer leaves the body as received
    /// and complete, as HTTP/1.1 framing has it.
    public static func step(for head: ResponseHead, rangeStart: Int64?, held: ResumeValidator?, now: Double,
                            probing: Bool = false) -> Step {
        let step = plainStep(for: head, rangeStart: rangeStart, held: held, now: now)
        guard probing else { return step }
        switch step {
        case .receive(let body):
            if case .append = body.placement { return step }
            return .complete
        case .fail(let failure) where failure.isTransient:
            return step
        case .fail:
            return .complete
        case .restart where head.status != 206 && head.status != 416:
            return .complete
        case .redirect, .complete, .restart:
            return step
        }
    }

    private static func plainStep(for head: ResponseHead, rangeStart: Int64?, held: ResumeValidator?, now: Double) -> Step {
        switch head.status {
        case 200:
            return bodyLength(head).map { length in
                .receive(Body(placement: .replace(ResumeValidator(of: head)), length: length, total: length,
                              endsAtClose: length == nil && head.values("Transfer-Encoding").isEmpty))
            } ?? .fail(.invalidResponse("the 200's Content-Length is not one number"))
        case 206:
            guard let rangeStart, let held else {
                return .fail(.invalidResponse("206 to a request that asked for no range"))
            }
            return partialContent(head, rangeStart: rangeStart, held: held)
        case 416:
            guard let rangeStart, let held else { return .fail(.httpStatus(416)) }
            return unsatisfiable(head, rangeStart: rangeStart, held: held)
        case 201...299:
            // §15.3: only 200 and 206 carry the representation a GET asked for. A range request
            // answered otherwise (204, 202, ...) is retried whole; a whole request fails.
            if rangeStart != nil { return .restart(reason: "the server answered \(head.status) to a range request") }
            return .fail(.httpStatus(head.status))
        case 301, 302, 303, 307, 308:
            // §15.4: the target is in Location; without exactly one, the redirect cannot be followed.
            guard let location = head.first("Location"), !location.isEmpty else {
                return .fail(.httpStatus(head.status))
            }
            return .redirect(status: head.status, location: location)
        default:
            return .fail(StatusRules.failure(for: head, now: now))
        }
    }

    /// After a body has been taken whole: whether the representation is complete, or which byte
    /// to ask for next (a `206` that covered less than the rest, or one whose total is `*`).
    public enum AfterBody: Hashable, Sendable {
        case complete
        case continueFrom(Int64)
        /// A body that ended at a close may have been cut short: ask for what follows `offset`
        /// (with the strong tag); a `416` proves the end, a `206` brings the rest.
        case probeFrom(Int64)
        case fail(TransferFailure)
    }

    /// `held` is the partial data's length now that `body` was received whole.
    public static func afterBody(_ body: Body, held: Int64) -> AfterBody {
        if let total = body.total {
            if held == total { return .complete }
            if held < total, case .append = body.placement { return .continueFrom(held) }
            return .fail(.invalidResponse("holding \(held) bytes of a \(total)-byte representation"))
        }
        switch body.placement {
        case .replace(let validator):
            // A chunked 200 proves its end with its last chunk; one ended by a close does not
            // (RFC 9112 §8): when the representation can be resumed, the server is asked.
            if body.endsAtClose, validator.canResume, held > 0 { return .probeFrom(held) }
            return .complete
        case .append:
            // §14.4 `*`: the length is unknown; only another request can tell where it ends.
            return .continueFrom(held)
        }
    }

    /// A `206`: usable only for the range asked for, of the same representation (§15.3.7.3).
    private static func partialContent(_ head: ResponseHead, rangeStart: Int64, held: ResumeValidator) -> Step {
        guard case .value(let field) = head.single("Content-Range"), let range = ContentRange(field),
              let first = range.first, let length = range.length else {
            return .restart(reason: "the 206 has no single valid Content-Range")
        }
        guard first == rangeStart else {
            return .restart(reason: "the 206 starts at byte \(first), not at byte \(rangeStart) as asked")
        }
        // §15.3.7.3: combine only parts that share a strong validator.
        let sent = ResumeValidator(of: head)
        guard let heldTag = held.strongTag else {
            return .restart(reason: "the held bytes have no strong ETag")
        }
        guard let sentTag = EntityTag(sent.etag) else {
            return .restart(reason: "the 206 carries no ETag to prove it is the same representation")
        }
        guard sentTag.strongMatch(heldTag) else {
            return .restart(reason: "the 206's ETag \(sentTag) is not \(heldTag)")
        }
        guard sent.contentEncoding == held.contentEncoding else {
            return .restart(reason: "the 206 is encoded \(sent.contentEncoding ?? "identity"), the held bytes \(held.contentEncoding ?? "identity")")
        }
        guard let declared = bodyLength(head), declared == nil || declared == length else {
            return .restart(reason: "the 206's Content-Length disagrees with its Content-Range")
        }
        return .receive(Body(placement: .append(offset: rangeStart), length: length, total: range.total))
    }

    /// A `416`: proof of completion only when it names a complete length equal to what is held,
    /// and any entity tag it carries is the held one.
    private static func unsatisfiable(_ head: ResponseHead, rangeStart: Int64, held: ResumeValidator) -> Step {
        guard case .value(let field) = head.single("Content-Range"), let range = ContentRange(field),
              range.first == nil, let total = range.total else {
            return .restart(reason: "the 416 does not say the representation's length")
        }
        guard total == rangeStart else {
            return .restart(reason: "the 416 says the representation is \(total) bytes, \(rangeStart) are held")
        }
        if case .value(let etag) = head.single("ETag") {
            guard let tag = EntityTag(etag), let heldTag = held.strongTag, tag.strongMatch(heldTag) else {
                return .restart(reason: "the 416's ETag \(etag) is not the held one")
            }
        }
        return .complete
    }

    /// The declared body length: `.some(nil)` when the message's end delimits it, `nil` when the
    /// field is malformed or contradicts itself. A `Transfer-Encoding` overrides `Content-Length`
    /// (RFC 9112 §6.3).
    static func bodyLength(_ head: ResponseHead) -> Int64?? {
        if !head.values("Transfer-Encoding").isEmpty { return .some(nil) }
        switch head.single("Content-Length") {
        case .absent: return .some(nil)
        case .conflicting: return nil
        case .value(let text):
            // §8.6: a list of identical values is the same length.
            let values = Set(text.split(separator: ",").map { $0.trimmingHTTPWhitespace })
            guard values.count == 1, let value = parseDigits(values.first!) else { return nil }
            return .some(value)
        }
    }
}

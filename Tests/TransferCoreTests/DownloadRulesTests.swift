import Testing
@testable import TransferCore

@Suite("Download rules: when held bytes are resumed, what each response means")
struct DownloadRulesTests {
    let strong = ResumeValidator(etag: "\"v1\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")

    func head(_ status: Int, _ fields: [(String, String)]) -> ResponseHead {
        ResponseHead(status: status, fields: fields.map { ResponseHead.Field($0.0, $0.1) })
    }

    func step(_ head: ResponseHead, from start: Int64? = 100, held: ResumeValidator? = nil) -> DownloadRules.Step {
        DownloadRules.step(for: head, rangeStart: start, held: start == nil ? nil : (held ?? strong), now: 0)
    }

    func isRestart(_ step: DownloadRules.Step) -> Bool {
        if case .restart = step { return true }
        return false
    }

    @Test("only a strong ETag lets held bytes be resumed (§13.1.5); anything else starts over and says why")
    func start() {
        #expect(DownloadRules.start(heldBytes: 100, validator: strong) == .resume(from: 100, ifRange: "\"v1\""))
        #expect(DownloadRules.start(heldBytes: 0, validator: strong) == .fromStart(discard: nil))
        let weak = DownloadRules.start(heldBytes: 100, validator: ResumeValidator(etag: "W/\"v1\""))
        #expect(weak == .fromStart(discard: "the partial data cannot be resumed: its ETag W/\"v1\" is weak"))
        let dated = DownloadRules.start(heldBytes: 100, validator: ResumeValidator(lastModified: "Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(dated == .fromStart(discard: "the partial data cannot be resumed: it has only a Last-Modified date, no ETag"))
        #expect(DownloadRules.start(heldBytes: 100, validator: nil) == .fromStart(discard: "the partial data has no recorded validator"))
    }

    @Test("a 206 for the asked range with the same strong ETag is appended, its length from Content-Range")
    func matchingPartial() {
        let expected = DownloadRules.Body(placement: .append(offset: 100), length: 900, total: 1000)
        #expect(step(head(206, [("Content-Range", "bytes 100-999/1000"), ("ETag", "\"v1\""), ("Content-Length", "900")])) == .receive(expected))
        // Without Content-Length the range still fixes the length (a longer body is refused).
        #expect(step(head(206, [("Content-Range", "bytes 100-999/1000"), ("ETag", "\"v1\"")])) == .receive(expected))
        // An unknown total: the length is still the range's.
        #expect(step(head(206, [("Content-Range", "bytes 100-199/*"), ("ETag", "\"v1\"")]))
                == .receive(.init(placement: .append(offset: 100), length: 100, total: nil)))
    }

    @Test("a 206 that cannot be proven the same representation, or for another range, restarts (§15.3.7.3)")
    func mismatchedPartial() {
        let range = ("Content-Range", "bytes 100-999/1000")
        #expect(isRestart(step(head(206, [range]))), "no ETag")
        #expect(isRestart(step(head(206, [range, ("ETag", "\"v2\"")]))), "another ETag")
        #expect(isRestart(step(head(206, [range, ("ETag", "W/\"v1\"")]))), "weak ETag")
        #expect(isRestart(step(head(206, [range, ("ETag", "\"v1\""), ("Content-Encoding", "gzip")]))), "another coding")
        #expect(isRestart(step(head(206, [("Content-Range", "bytes 0-999/1000"), ("ETag", "\"v1\"")]))), "another range")
        #expect(isRestart(step(head(206, [("ETag", "\"v1\"")]))), "no Content-Range")
        #expect(isRestart(step(head(206, [range, range, ("ETag", "\"v1\"")]))) == false, "a repeated identical field is one")
        #expect(isRestart(step(head(206, [range, ("Content-Range", "bytes 100-998/1000"), ("ETag", "\"v1\"")]))))
        #expect(isRestart(step(head(206, [range, ("ETag", "\"v1\""), ("Content-Length", "901")]))), "lying Content-Length")
        #expect(step(head(206, [range, ("ETag", "\"v1\"")]), from: nil) == .fail(.invalidResponse("206 to a request that asked for no range")))
    }

    @Test("a 200 replaces held bytes with a new representation whose validator it carries")
    func whole() {
        let answer = step(head(200, [("ETag", "\"v2\""), ("Content-Length", "10"), ("Content-Encoding", "identity")]))
        #expect(answer == .receive(.init(placement: .replace(ResumeValidator(etag: "\"v2\"")), length: 10, total: 10)))
        #expect(step(head(200, [("Transfer-Encoding", "chunked"), ("Content-Length", "10")]))
                == .receive(.init(placement: .replace(ResumeValidator()), length: nil, total: nil)))
        #expect(step(head(200, [("Content-Length", "10, 10")])) == .receive(.init(placement: .replace(ResumeValidator()), length: 10, total: 10)))
        #expect(step(head(200, [("Content-Length", "10, 11")])) == .fail(.invalidResponse("the 200's Content-Length is not one number")))
        #expect(step(head(200, [("Content-Length", "-1")])) == .fail(.invalidResponse("the 200's Content-Length is not one number")))
    }

    @Test("another 2xx never empties a file: a range request restarts, a whole one fails (§15.3)")
    func otherSuccess() {
        #expect(isRestart(step(head(204, []))))
        #expect(isRestart(step(head(202, []))))
        #expect(step(head(204, []), from: nil) == .fail(.httpStatus(204)))
        #expect(!TransferFailure.httpStatus(204).isTransient)
    }

    @Test("a 416 completes only when it names the held length and no other ETag")
    func unsatisfiable() {
        #expect(step(head(416, [("Content-Range", "bytes */100")])) == .complete)
        #expect(step(head(416, [("Content-Range", "bytes */100"), ("ETag", "\"v1\"")])) == .complete)
        #expect(isRestart(step(head(416, [("Content-Range", "bytes */100"), ("ETag", "\"v2\"")]))))
        #expect(isRestart(step(head(416, [("Content-Range", "bytes */99")]))))
        #expect(isRestart(step(head(416, []))), "no length")
        #expect(step(head(416, []), from: nil) == .fail(.httpStatus(416)))
    }

    @Test("redirects, statuses and Retry-After")
    func statuses() {
        #expect(step(head(302, [("Location", "/other")])) == .redirect(status: 302, location: "/other"))
        #expect(step(head(302, [])) == .fail(.httpStatus(302)))
        #expect(step(head(503, [("Retry-After", "7")])) == .fail(.httpStatus(503, retryAfter: 7)))
        #expect(step(head(429, [("Retry-After", "Thu, 01 Jan 1970 00:00:30 GMT")])) == .fail(.httpStatus(429, retryAfter: 30)))
        #expect(step(head(404, [])) == .fail(.httpStatus(404)))
        #expect(TransferFailure.httpStatus(503).isTransient && TransferFailure.httpStatus(429).isTransient)
        #expect(TransferFailure.httpStatus(408).isTransient)
        #expect(!TransferFailure.httpStatus(403).isTransient && !TransferFailure.httpStatus(501).isTransient)
        #expect(!TransferFailure.redirectLoop("x").isTransient)
    }

    @Test("a 200 ended by a close is asked about when it can be resumed; a chunked one proves its own end (RFC 9112 §6.3, §8)")
    func closeDelimited() {
        let strong = ResumeValidator(etag: "\"v1\"")
        #expect(step(head(200, [("ETag", "\"v1\"")]), from: nil)
                == .receive(.init(placement: .replace(strong), length: nil, total: nil, endsAtClose: true)))
        #expect(step(head(200, [("ETag", "\"v1\""), ("Transfer-Encoding", "chunked")]), from: nil)
                == .receive(.init(placement: .replace(strong), length: nil, total: nil, endsAtClose: false)))
        let closed = DownloadRules.Body(placement: .replace(strong), length: nil, total: nil, endsAtClose: true)
        #expect(DownloadRules.afterBody(closed, held: 500) == .probeFrom(500))
        let weak = DownloadRules.Body(placement: .replace(ResumeValidator(etag: "W/\"v1\"")), length: nil, total: nil, endsAtClose: true)
        #expect(DownloadRules.afterBody(weak, held: 500) == .complete, "nothing to ask with: taken as HTTP/1.1 frames it")
        let chunked = DownloadRules.Body(placement: .replace(strong), length: nil, total: nil, endsAtClose: false)
        #expect(DownloadRules.afterBody(chunked, held: 500) == .complete)
    }

    @Test("the answer to that question: a 416 or a 206 tell, a transient failure waits, anything else keeps the body")
    func probing() {
        func probe(_ head: ResponseHead) -> DownloadRules.Step {
            DownloadRules.step(for: head, rangeStart: 100, held: strong, now: 0, probing: true)
        }
        #expect(probe(head(416, [("Content-Range", "bytes */100")])) == .complete)
        #expect(isRestart(probe(head(416, [("Content-Range", "bytes */90")]))), "the held bytes are longer than the representation")
        #expect(probe(head(206, [("Content-Range", "bytes 100-199/200"), ("ETag", "\"v1\"")]))
                == .receive(.init(placement: .append(offset: 100), length: 100, total: 200)))
        #expect(isRestart(probe(head(206, [("Content-Range", "bytes 100-199/200"), ("ETag", "\"v2\"")]))), "changed since")
        #expect(probe(head(200, [("ETag", "\"v1\""), ("Content-Length", "100")])) == .complete, "ranges ignored: nothing to learn")
        #expect(probe(head(204, [])) == .complete)
        #expect(probe(head(404, [])) == .complete)
        #expect(probe(head(503, [])) == .fail(.httpStatus(503)), "asked again later")
    }

    @Test("after a body: complete at the total, continue after a short range or an unknown total")
    func afterBody() {
        let append = DownloadRules.Body(placement: .append(offset: 100), length: 100, total: 1000)
        #expect(DownloadRules.afterBody(append, held: 200) == .continueFrom(200))
        #expect(DownloadRules.afterBody(append, held: 1000) == .complete)
        let unknown = DownloadRules.Body(placement: .append(offset: 100), length: 100, total: nil)
        #expect(DownloadRules.afterBody(unknown, held: 200) == .continueFrom(200))
        let whole = DownloadRules.Body(placement: .replace(ResumeValidator()), length: nil, total: nil)
        #expect(DownloadRules.afterBody(whole, held: 5) == .complete)
    }
}

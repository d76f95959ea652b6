import Crypto
import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `bgtaskd` against a server that misbehaves the ways real servers and proxies do
/// (`FaultCase`): a transfer that says `completed` has every byte right, whatever the server did.
@Suite struct TransferFaultTests {
    static let app = FetcherApp.id
    let size: Int64 = 600_000
    /// Retries after 0.2 s, so a test that drops a connection does not wait out the default backoff.
    static var quickRetries: [String: Any] { ["transferRetryInitialSeconds": 0.2] }

    private func bytes(seed: UInt64) -> Data { Data(GeneratedBytes(size: size, seed: seed).bytes(0..<size)) }

    private func finished(_ fetcher: FetcherApp, _ id: String, timeout: TimeInterval = 20) async throws -> TransferRecord {
        try await fetcher.env.eventually("\(id) to finish", timeout: timeout) {
            guard let state = fetcher.transfer(id)?.state, state == .completed || state == .failed else { return false }
            // A commit writes its files before it appends its events (a restart may be in the end's
            // commit): wait for the end's event too.
            return fetcher.env.events(state == .completed ? .transferCompleted : .transferFailed).contains { $0.identifier?.rawValue == id }
        }
        return try #require(fetcher.transfer(id))
    }

    private func restarts(_ env: TestEnvironment, _ id: String) -> [Event] {
        env.events(.transferRestarted).filter { $0.identifier?.rawValue == id }
    }

    /// Serves `fault` at `/<fault>` and downloads it as `<fault>`.
    private func serve(_ fault: FaultCase, on server: LoopbackServer, seed: UInt64 = 7, dropAt: Int64? = nil) {
        for (path, route) in fault.routes(path: "/\(fault)", size: size, seed: seed, dropAt: dropAt ?? size / 3) {
            server.setRoute(path, route)
        }
    }

    @Test func everyCaseOfTheCatalogueEndsWithTheRightBytesOrAClearFailure() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: ["transferRetryInitialSeconds": 0.2, "maximumConcurrentTransfers": 32])
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        for fault in FaultCase.allCases {
            serve(fault, on: server)
            #expect(try fetcher.download(fault.rawValue, server.url("/\(fault)")).status == 0)
        }
        for fault in FaultCase.allCases {
            let record = try await finished(fetcher, fault.rawValue, timeout: 30)
            let acceptable = fault.acceptableSeeds(seed: 7)
            if acceptable.isEmpty {
                #expect(record.state == .failed, "\(fault): \(fault.summary)")
                #expect(fetcher.downloaded(fault.rawValue) == nil, "\(fault): no file for a failed download")
            } else {
                #expect(record.state == .completed, "\(fault): \(record.lastError ?? "")")
                let file = fetcher.downloaded(fault.rawValue)
                #expect(acceptable.contains { file == bytes(seed: $0) }, "\(fault): the file is one whole representation")
            }
            #expect(!StateFiles.exists(env.paths.transferPartialData(fetcher.key(fault.rawValue))), "\(fault): no partial data left")
            #expect(!StateFiles.exists(env.paths.transferPartialValidator(fetcher.key(fault.rawValue))), "\(fault): no validator left")
        }
        await server.shutdown()
    }

    @Test func aPartialResponseLongerThanItsRangeIsNeverWritten() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: Self.quickRetries)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // With a Content-Length that tells the truth about the body, the head already contradicts
        // itself; without one, only counting the body against the range finds the extra bytes.
        serve(.rangeBodyTooLong, on: server)
        server.setRoute("/unframed", Route(.generated(size: size, seed: 7),
                                           nextRequests: [Faults(dropAfter: size / 3), Faults(rangeBodyExtra: 100, omitContentLength: true)]))
        #expect(try fetcher.download("long", server.url("/rangeBodyTooLong")).status == 0)
        try fetcher.download("unframed", server.url("/unframed"))
        for (id, why) in [("long", "Content-Length disagrees with its Content-Range"), ("unframed", "runs past")] {
            #expect(try await finished(fetcher, id).state == .completed)
            #expect(fetcher.downloaded(id) == bytes(seed: 7), "\(id): no byte past the range reached the file")
            #expect(restarts(env, id).contains { $0.reason?.contains(why) == true }, "\(id): \(restarts(env, id))")
        }
        await server.shutdown()
    }

    @Test func aPartOfUnknownTotalThatEndsEarlyIsNotTakenForTheEnd() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: Self.quickRetries)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        serve(.unknownTotalEndsEarly, on: server)
        #expect(try fetcher.download("star", server.url("/unknownTotalEndsEarly")).status == 0)
        let record = try await finished(fetcher, "star")
        #expect(record.state == .completed)
        #expect(fetcher.downloaded("star") == bytes(seed: 7))
        #expect(record.retries >= 1, "the short part was a lost connection, not the end")
        await server.shutdown()
    }

    @Test func aBodyEndedByACloseIsCheckedForMoreBeforeItCounts() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: Self.quickRetries)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        serve(.closeDelimitedEndsEarly, on: server)
        #expect(try fetcher.download("closed", server.url("/closeDelimitedEndsEarly")).status == 0)
        #expect(try await finished(fetcher, "closed").state == .completed)
        #expect(fetcher.downloaded("closed") == bytes(seed: 7), "the cut was not taken for the end")
        let requests = server.requests(for: "/closeDelimitedEndsEarly")
        #expect(requests.first?.range == nil && requests.dropFirst().first?.range == "bytes=\(size / 3)-", "\(requests)")
        await server.shutdown()
    }

    @Test func aResumeIsJoinedOnlyToTheSameStrongETag() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: Self.quickRetries)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        for fault in [FaultCase.changedEntityIgnoringIfRange, .weakETag, .lastModifiedOnly, .noValidator] {
            serve(fault, on: server)
            #expect(try fetcher.download(fault.rawValue, server.url("/\(fault)")).status == 0)
        }
        // The server changed the entity and sent a 206 of the new one anyway: it is not spliced on.
        #expect(try await finished(fetcher, "changedEntityIgnoringIfRange").state == .completed)
        #expect(fetcher.downloaded("changedEntityIgnoringIfRange") == bytes(seed: 8), "the whole new representation")
        #expect(restarts(env, "changedEntityIgnoringIfRange").contains { $0.reason?.contains("ETag") == true })
        // Held bytes of a weak, dated-only or unvalidated representation are not even asked to be resumed.
        for (fault, why) in [(FaultCase.weakETag, "weak"), (.lastModifiedOnly, "Last-Modified"), (.noValidator, "no ETag")] {
            #expect(try await finished(fetcher, fault.rawValue).state == .completed, "\(fault)")
            #expect(fetcher.downloaded(fault.rawValue) == bytes(seed: 7), "\(fault)")
            #expect(server.requests(for: "/\(fault)").allSatisfy { $0.range == nil }, "\(fault): no Range without a strong ETag")
            #expect(restarts(env, fault.rawValue).contains { $0.reason?.contains(why) == true }, "\(fault): \(restarts(env, fault.rawValue))")
        }
        await server.shutdown()
    }

    @Test func theValidatorIsDurableBeforeTheFirstByteOfANewRepresentation() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: Self.quickRetries)
        let server = try await LoopbackServer.start(routes: [
            // The first response drops; then the entity changes, and its first response stalls
            // mid-body, where the scheduler is killed. The stall (and the attempt's request
            // timeout) outlast any time a loaded machine keeps the test from looking.
            "/moving": Route(.generated(size: size, seed: 7), faults: Faults(generation: 1),
                             nextRequests: [Faults(dropAfter: size / 3),
                                            Faults(stallSeconds: 600, stallAfter: size / 2, generation: 1)]),
        ])
        let daemon = try env.startDaemon()
        #expect(try fetcher.download("moving", server.url("/moving"), "--request-timeout", "900").status == 0)
        let partial = env.paths.transferPartialData(fetcher.key("moving"))
        do {
            try await env.eventually("the new representation's bytes", timeout: 60) {
                server.requests(for: "/moving").count >= 2 && (StateFiles.size(of: partial) ?? 0) >= Int(size / 2)
            }
        } catch {
            throw TestFailure("\(error); partial \(String(describing: StateFiles.size(of: partial))) bytes; "
                              + "requests \(server.requests(for: "/moving")); events: \(env.events().map(\.message))")
        }
        // What is on disk now is what a crash leaves: the new bytes and, already durable, their validator.
        let validator = try JSONSerialization.jsonObject(with: try StateFiles.read(env.paths.transferPartialValidator(fetcher.key("moving")))) as? [String: Any]
        #expect(validator?["etag"] as? String == "\"g8-\(size)\"", "\(String(describing: validator))")
        let held = try #require(FileManager.default.contents(atPath: partial))
        #expect(held == bytes(seed: 8).prefix(held.count), "a prefix of the representation its validator names")
        daemon.crash()

        let second = try env.startDaemon()
        defer { second.stop() }
        #expect(try await finished(fetcher, "moving").state == .completed)
        #expect(fetcher.downloaded("moving") == bytes(seed: 8))
        let last = try #require(server.requests(for: "/moving").last)
        #expect(last.ifRange == "\"g8-\(size)\"" && last.status == 206, "resumed with the new validator: \(last)")
        await server.shutdown()
    }

    @Test func anotherSuccessToAResumeNeverEmptiesTheFile() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: Self.quickRetries)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        for fault in [FaultCase.noContentOnResume, .otherSuccessOnResume] {
            serve(fault, on: server)
            #expect(try fetcher.download(fault.rawValue, server.url("/\(fault)")).status == 0)
        }
        for fault in [FaultCase.noContentOnResume, .otherSuccessOnResume] {
            let record = try await finished(fetcher, fault.rawValue)
            #expect(record.state == .completed, "\(fault)")
            #expect(record.bytesTransferred == size, "\(fault)")
            #expect(fetcher.downloaded(fault.rawValue) == bytes(seed: 7), "\(fault)")
            let statuses = server.requests(for: "/\(fault)").map(\.status)
            #expect(statuses.contains(fault == .noContentOnResume ? 204 : 202) && statuses.last == 200, "\(fault): \(statuses)")
        }
        await server.shutdown()
    }

    @Test func uploadsFollowRedirectsWithTheirBodyAndLoopsFailAtOnce() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: Self.quickRetries)
        let server = try await LoopbackServer.start(routes: [
            "/u307": Route(.redirect(status: 307, location: "/t307")),
            "/u308": Route(.redirect(status: 308, location: "http://127.0.0.1:0/unused")),
            "/u301": Route(.redirect(status: 301, location: "t301")),
            "/u303": Route(.redirect(status: 303, location: "/result")),
            "/result": Route(.generated(size: 10, seed: 1)),
            "/loop-a": Route(.redirect(status: 302, location: "/loop-b")),
            "/loop-b": Route(.redirect(status: 302, location: "/loop-a")),
        ])
        server.setRoute("/u308", Route(.redirect(status: 308, location: server.url("/t308"))))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let source = env.root + "/photo.bin"
        let body = Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
        try body.write(to: URL(fileURLWithPath: source))
        var hash = SHA256()
        hash.update(data: Array(body))
        let digest = hash.finalize().hexDigest
        for name in ["u307", "u308", "u301", "u303"] {
            let result = try env.bgctl("transfer", "upload", "--app", Self.app, "--id", name, server.url("/\(name)"), source)
            #expect(result.status == 0, "\(result)")
        }
        #expect(try fetcher.download("loop", server.url("/loop-a")).status == 0)
        let upLoop = try env.bgctl("transfer", "upload", "--app", Self.app, "--id", "uploop", server.url("/loop-a"), source)
        #expect(upLoop.status == 0)

        for (name, target) in [("u307", "/t307"), ("u308", "/t308"), ("u301", "/t301")] {
            #expect(try await finished(fetcher, name).state == .completed, "\(name): \(fetcher.transfer(name)?.lastError ?? "")")
            let received = try #require(server.receivedUpload(target), "\(name)")
            #expect(received.byteCount == Int64(body.count) && received.sha256 == digest && received.method == "PUT", "\(name)")
        }
        // 303: the server took the body at the first URL and points at a result, fetched with GET.
        #expect(try await finished(fetcher, "u303").state == .completed)
        let taken = try #require(server.requests(for: "/u303").first)
        #expect(taken.method == "PUT" && taken.bodyBytes == Int64(body.count), "\(taken)")
        #expect(server.requests(for: "/result").map(\.method) == ["GET"])

        for name in ["loop", "uploop"] {
            let record = try await finished(fetcher, name)
            #expect(record.state == .failed && record.retries == 0, "\(name): a loop fails at once, \(record)")
            #expect(record.lastError?.contains("redirects do not end") == true, "\(record.lastError ?? "")")
        }
        await server.shutdown()
    }

    @Test func retryAfterIsHonouredAndProgressRestartsTheBackoff() async throws {
        let env = try TestEnvironment()
        // Without Retry-After a retry would wait 30 s; the test finishes long before.
        let fetcher = try FetcherApp(env, settings: ["transferRetryInitialSeconds": 30])
        let server = try await LoopbackServer.start(routes: [
            "/busy": Route(.generated(size: size, seed: 7), nextRequests: [Faults(status: 503, retryAfter: "1")]),
            "/forbidden": Route(.generated(size: size, seed: 7), faults: Faults(status: 403)),
        ])
        serve(.tooManyRequestsRetryAfterDate, on: server)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try fetcher.download("busy", server.url("/busy")).status == 0)
        try fetcher.download("dated", server.url("/tooManyRequestsRetryAfterDate"))
        #expect(try fetcher.download("forbidden", server.url("/forbidden")).status == 0)
        for id in ["busy", "dated"] {
            #expect(try await finished(fetcher, id).state == .completed, "\(id)")
            #expect(fetcher.downloaded(id) == bytes(seed: 7))
            let retry = try #require(env.events(.transferRetrying).first { $0.identifier?.rawValue == id })
            #expect(retry.message.hasSuffix("(the server's Retry-After)"), "\(retry.message)")
        }
        #expect(env.events(.transferRetrying).first { $0.identifier?.rawValue == "busy" }?.message.contains("retry 1 in 1 s") == true)
        let forbidden = try await finished(fetcher, "forbidden")
        #expect(forbidden.state == .failed && forbidden.retries == 0, "a 403 fails at once")
        await server.shutdown()
    }

    @Test func aConnectionThatDropsAfterProgressIsRetriedWithoutGrowingBackoff() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: ["transferRetryInitialSeconds": 0.3, "transferRetryMaximumSeconds": 300])
        // Seven drops, each after 50 KB of progress: a doubling backoff would wait 38 s in all.
        let server = try await LoopbackServer.start(routes: [
            "/flaky": Route(.generated(size: size, seed: 7), nextRequests: Array(repeating: Faults(dropAfter: 50_000), count: 7)),
        ])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try fetcher.download("flaky", server.url("/flaky")).status == 0)
        let record = try await finished(fetcher, "flaky", timeout: 30)
        #expect(record.state == .completed)
        #expect(fetcher.downloaded("flaky") == bytes(seed: 7))
        let retries = env.events(.transferRetrying).filter { $0.identifier?.rawValue == "flaky" }
        #expect(retries.count == 7)
        #expect(retries.allSatisfy { $0.message.contains(" in 0.3 s") }, "\(retries.map(\.message))")
        await server.shutdown()
    }

    @Test func anUploadWhoseSourceIsRewrittenWhileItIsSentIsSentAgain() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: Self.quickRetries)
        let size = 6_000_000
        // The server reads the first attempt slowly (some 15 s, loopback buffers aside), so the
        // file usually changes while its bytes are still being sent; and it holds that attempt's
        // answer until the file has changed, so the change always lands before the attempt can
        // succeed, however late a busy machine lets the test get to it (the request timeout of
        // 900 s outlasts any such wait). The second attempt goes at full speed.
        let hold = ResponseHold()
        let server = try await LoopbackServer.start(routes: [
            "/slow": Route(.uploadTarget(saveTo: env.root + "/received.bin"), nextRequests: [Faults(bytesPerSecond: 400_000, hold: hold)]),
        ])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let source = env.root + "/notes.bin"
        let first = Data(repeating: 0x11, count: size)
        let second = Data(repeating: 0x22, count: size)
        try first.write(to: URL(fileURLWithPath: source))
        #expect(try env.bgctl("transfer", "upload", "--app", Self.app, "--id", "notes", server.url("/slow"), source,
                              "--request-timeout", "900").status == 0)
        try await env.eventually("the upload to be under way") { (fetcher.transfer("notes")?.bytesTransferred ?? 0) > 0 }
        #expect(fetcher.transfer("notes")?.state == .running, "the file changes while the first attempt sends it")
        // Rewritten in place, same size: only its times say it changed.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source))
        try handle.write(contentsOf: second)
        try handle.close()
        hold.release()

        // The first attempt may still have most of its slow body to send before it is answered.
        let record = try await finished(fetcher, "notes", timeout: 60)
        #expect(record.state == .completed)
        #expect(env.events(.transferRetrying).contains { $0.identifier?.rawValue == "notes" && $0.message.contains("changed while it was being sent") })
        var hash = SHA256()
        hash.update(data: Array(second))
        let received = try #require(server.receivedUpload("/slow"))
        #expect(received.sha256 == hash.finalize().hexDigest && received.isComplete, "the server's last copy is the new file, whole")
        await server.shutdown()
    }
}

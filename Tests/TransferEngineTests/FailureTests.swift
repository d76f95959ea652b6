import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing
import TransferEngine

@Suite("Failed attempts")
struct FailureTests {
    @Test("404 is a permanent failure and leaves no partial data")
    func notFoundIsPermanent() async throws {
        try await withFixture { fixture in
            let events = try await runAttempt(fixture.engine, fixture.download("missing", "/nothing-here"))
            #expect(events.final == .failed(.httpStatus(404)))
            if case .failed(let failure) = events.final { #expect(!failure.isTransient) }
            #expect(!fileExists(fixture.paths.transferPartialData(fixture.key("missing"))))
            #expect(!fileExists(fixture.appFolder + "/missing.bin"))
        }
    }

    @Test("503, 500, 429 and 408 are transient; 403 and 410 are permanent", arguments: [503, 500, 429, 408, 403, 410])
    func statusClassification(status: Int) async throws {
        try await withFixture { fixture in
            let events = try await runAttempt(fixture.engine, fixture.download("status", "/generated/1000?status=\(status)"))
            #expect(events.final == .failed(.httpStatus(status)))
            if case .failed(let failure) = events.final {
                #expect(failure.isTransient == [503, 500, 429, 408].contains(status))
                #expect(failure.description == "the server answered HTTP \(status)")
            }
        }
    }

    @Test("a server that stalls mid-body trips the no-progress timeout, and the partial data is kept")
    func stallTimesOut() async throws {
        try await withFixture { fixture in
            let started = ContinuousClock.now
            // A trickle of 100 KB/s, then nothing once 30 000 bytes are out.
            let events = try await runAttempt(fixture.engine,
                                              fixture.download("stall", "/generated/100000?rate=100000&stall=20&stallAfter=30000",
                                                               timeout: 0.5))
            let elapsed = ContinuousClock.now - started
            #expect(events.final == .failed(.requestTimedOut(seconds: 0.5)))
            // The failure's kind is the proof that the no-progress timer fired, not the stall's
            // end; how long the test took to see it depends on the other tests sharing the machine.
            #expect(elapsed >= .milliseconds(500))
            // The HTTP client may still hold the last slice it read; what was handed over is kept.
            let partial = try #require(fixture.partialLength("stall"))
            #expect(partial <= 30_000, "partial \(partial)")
            #expect(events.last?.progress.bytesTransferred == partial)
        }
    }

    @Test("a Content-Length larger than the body sent is a transient failure with no finished file")
    func lyingContentLength() async throws {
        try await withFixture { fixture in
            let events = try await runAttempt(fixture.engine, fixture.download("liar", "/generated/200000?lie=5000"))
            guard case .failed(let failure) = events.final else {
                Issue.record("expected a failure, got \(String(describing: events.final))")
                return
            }
            #expect(failure.isTransient, "\(failure)")
            #expect(failure.name == "connectionLost")
            #expect(!fileExists(fixture.appFolder + "/liar.bin"))
            #expect((fixture.partialLength("liar") ?? 0) <= 200_000)
        }
    }

    @Test("a refused connection fails at once, while a silent host still waits for its connect timeout")
    func connectionRefusedFailsAtOnce() async throws {
        // A silent host costs its connect timeout; the refusal must end long before that.
        try await withFixture(connectTimeout: 8) { fixture in
            let silent = try UnansweredPort.silent()
            defer { silent.close() }
            let refusing = try UnansweredPort.refusing()
            defer { refusing.close() }
            let silentKey = fixture.key("silent")
            let silentJob = TransferJob.download(silentKey, from: silent.url("/generated/10"),
                                                 partialFile: fixture.paths.transferPartialData(silentKey),
                                                 appFolder: fixture.appFolder, destination: "silent.bin")
            let (silentEvents, silentContinuation) = AsyncStream<TransferEvent>.makeStream()
            try fixture.engine.start(silentJob) { event in
                silentContinuation.yield(event)
                if event.isFinal { silentContinuation.finish() }
            }

            let refusedKey = fixture.key("refused")
            let refusedJob = TransferJob.download(refusedKey, from: refusing.url("/generated/10"),
                                                  partialFile: fixture.paths.transferPartialData(refusedKey),
                                                  appFolder: fixture.appFolder, destination: "refused.bin")
            // Which attempts still run when the refusal's final event is delivered, noted on the
            // engine's thread at that moment (the test's own task may be scheduled much later).
            let engine = fixture.engine
            let (refusedEvents, refusedContinuation) = AsyncStream<(TransferEvent, Set<TaskKey>)>.makeStream()
            try engine.start(refusedJob) { event in
                guard event.isFinal else { return }
                refusedContinuation.yield((event, engine.runningKeys))
                refusedContinuation.finish()
            }
            var refused: (event: TransferEvent, running: Set<TaskKey>)?
            for await final in refusedEvents { refused = final }
            #expect(refused?.event.kind == .failed(.connectionFailed("connection refused")))
            if case .failed(let failure) = refused?.event.kind { #expect(failure.isTransient) }
            // The proof that the refusal did not wait for the connect timeout: the silent host,
            // started first with the same timeout, was still connecting.
            #expect(refused?.running == [silentKey])

            var silentFinal: TransferEvent.Kind?
            for await event in silentEvents where event.isFinal { silentFinal = event.kind }
            #expect(silentFinal == .failed(.connectionFailed("timed out connecting")))
            if case .failed(let failure) = silentFinal { #expect(failure.isTransient) }
        }
    }

    @Test("a resource deadline already passed fails for good without a request")
    func resourceDeadlinePassed() async throws {
        try await withFixture { fixture in
            let events = try await runAttempt(fixture.engine,
                                              fixture.download("late", "/generated/1000", resourceDeadline: Date().addingTimeInterval(-1)))
            #expect(events.final == .failed(.resourceTimedOut))
            #expect(fixture.server.requests.isEmpty)
        }
    }

    @Test("a resource deadline that passes mid-transfer stops it")
    func resourceDeadlineMidTransfer() async throws {
        try await withFixture { fixture in
            let events = try await runAttempt(fixture.engine,
                                              fixture.download("slowpoke", "/generated/1000000?rate=100000",
                                                               resourceDeadline: Date().addingTimeInterval(0.6)))
            #expect(events.final == .failed(.resourceTimedOut))
            #expect(!fileExists(fixture.paths.transferPartialData(fixture.key("slowpoke"))))
        }
    }

    @Test("URLs with schemes other than http and https are refused before any I/O",
          arguments: ["ftp://127.0.0.1/file", "file:///etc/passwd", "gopher://example.com/"])
    func otherSchemesRefused(url: String) async throws {
        try await withFixture { fixture in
            let key = fixture.key("scheme")
            let job = TransferJob.download(key, from: url, partialFile: fixture.paths.transferPartialData(key),
                                           appFolder: fixture.appFolder, destination: "scheme.bin")
            let scheme = String(url.prefix { $0 != ":" })
            #expect(throws: TransferFailure.unsupportedScheme(scheme)) { try job.validate() }
            let events = try await runAttempt(fixture.engine, job)
            #expect(events.final == .failed(.unsupportedScheme(scheme)))
            #expect(!fileExists(fixture.paths.transferPartialData(key)))
        }
    }

    @Test("starting a transfer that is already running is refused")
    func alreadyRunning() async throws {
        try await withFixture { fixture in
            let job = fixture.download("twice", "/generated/400000?rate=200000")
            let (stream, continuation) = AsyncStream<TransferEvent>.makeStream()
            try fixture.engine.start(job) { event in
                continuation.yield(event)
                if event.isFinal { continuation.finish() }
            }
            #expect(throws: TransferStartError.alreadyRunning(job.key)) {
                try fixture.engine.start(job) { _ in }
            }
            fixture.engine.pause(job.key)
            var final: TransferEvent.Kind?
            for await event in stream where event.isFinal { final = event.kind }
            #expect(final == .paused)
        }
    }
}

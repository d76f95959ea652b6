import Foundation
import LoopbackServer
import TaskState
import Testing
import TransferEngine

@Suite("Resuming downloads")
struct ResumeTests {
    @Test("a download whose connection drops at random offsets resumes each time and arrives byte-exact")
    func resumesAfterDrops() async throws {
        try await withFixture { fixture in
            let size: Int64 = 3 * 1024 * 1024 + 12_345
            let bytes = GeneratedBytes(size: size, seed: 7)
            var generator = SystemRandomNumberGenerator()
            // Three drops, each after a random number of body bytes of that response.
            let drops = (0..<3).map { _ in Int64.random(in: 1...(size / 4), using: &generator) }
            fixture.server.setRoute("/photo", Route(.generated(size: size, seed: 7),
                                                   nextRequests: drops.map { Faults(dropAfter: $0) }))
            var validator = ResumeValidator()
            var offsets: [Int64] = []
            var held: Int64 = 0
            for drop in drops {
                let events = try await runAttempt(fixture.engine, fixture.download("photo", "/photo"))
                guard case .failed(let failure) = events.final else {
                    Issue.record("expected a failure, got \(String(describing: events.final))")
                    return
                }
                #expect(failure.isTransient, "\(failure)")
                // The client may lose what it had buffered but not yet handed over when the
                // connection dropped; what it keeps is a prefix of what the server sent.
                let partial = try #require(fixture.partialLength("photo"))
                #expect(partial >= held && partial <= held + drop)
                #expect(events.last?.progress.bytesTransferred == partial)
                offsets.append(partial)
                held = partial
                validator = events.validator
                #expect(validator.etag == "\"g7-\(size)\"")
            }
            let events = try await runAttempt(fixture.engine, fixture.download("photo", "/photo"))
            #expect(events.final == .completed(statusCode: 206))
            let destination = fixture.appFolder + "/photo.bin"
            #expect(try await holdsExactly(destination, bytes, scratch: fixture.root))
            #expect(!fileExists(fixture.paths.transferPartialData(fixture.key("photo"))))
            // Each resumed request asked for the rest, and only of the same entity.
            let requests = fixture.server.requests(for: "/photo")
            let resumed = offsets.filter { $0 > 0 }
            #expect(requests.compactMap(\.range) == resumed.map { "bytes=\($0)-" })
            #expect(requests.filter { $0.range != nil }.allSatisfy { $0.ifRange == "\"g7-\(size)\"" && $0.status == 206 })
            #expect(resumed.count >= 2, "resumed at \(offsets)")
        }
    }

    @Test("a server that ignores Range gets a clean restart and the right bytes")
    func restartsWhenRangeIgnored() async throws {
        try await withFixture { fixture in
            let size: Int64 = 1_000_000
            fixture.server.setRoute("/doc", Route(.generated(size: size, seed: 3), faults: Faults(ignoreRange: true),
                                                 nextRequests: [Faults(dropAfter: 400_000)]))
            _ = try await runAttempt(fixture.engine, fixture.download("doc", "/doc"))
            let partial = try #require(fixture.partialLength("doc"))
            #expect(partial > 0 && partial <= 400_000)
            let second = try await runAttempt(fixture.engine, fixture.download("doc", "/doc"))
            #expect(second.final == .completed(statusCode: 200))
            #expect(try await holdsExactly(fixture.appFolder + "/doc.bin", GeneratedBytes(size: size, seed: 3), scratch: fixture.root))
            let requests = fixture.server.requests(for: "/doc")
            #expect(requests.count == 2)
            #expect(requests.last?.range == "bytes=\(partial)-")
            #expect(requests.last?.status == 200)
        }
    }

    @Test("an entity that changed between attempts (If-Range mismatch) is downloaded again from the start")
    func restartsWhenEntityChanged() async throws {
        try await withFixture { fixture in
            let size: Int64 = 800_000
            fixture.server.setRoute("/feed", Route(.generated(size: size, seed: 1), nextRequests: [Faults(dropAfter: 300_000)]))
            _ = try await runAttempt(fixture.engine, fixture.download("feed", "/feed"))
            #expect((fixture.partialLength("feed") ?? 0) > 0)
            // The server now has a new version of the file, one byte longer.
            fixture.server.setRoute("/feed", Route(.generated(size: size + 1, seed: 2)))
            let second = try await runAttempt(fixture.engine, fixture.download("feed", "/feed"))
            #expect(second.final == .completed(statusCode: 200))
            #expect(second.validator.etag == "\"g2-\(size + 1)\"")
            #expect(try await holdsExactly(fixture.appFolder + "/feed.bin", GeneratedBytes(size: size + 1, seed: 2), scratch: fixture.root))
        }
    }

    @Test("partial data without a validator is not trusted: the download starts over")
    func noValidatorStartsOver() async throws {
        try await withFixture { fixture in
            let key = fixture.key("plain")
            _ = FileManager.default.createFile(atPath: fixture.paths.transferPartialData(key), contents: Data(repeating: 0xEE, count: 5000))
            let events = try await runAttempt(fixture.engine, fixture.download("plain", "/generated/20000"))
            #expect(events.final == .completed(statusCode: 200))
            #expect(fixture.server.requests(for: "/generated/20000").first?.range == nil)
            #expect(try await matchesGenerated(fixture.appFolder + "/plain.bin", GeneratedBytes(size: 20000)))
        }
    }

    @Test("416 with partial data that is already the whole entity completes without a body")
    func rangeNotSatisfiableWhenWhole() async throws {
        try await withFixture { fixture in
            let bytes = GeneratedBytes(size: 50_000, seed: 9)
            fixture.server.setRoute("/done", Route(.generated(size: 50_000, seed: 9)))
            let key = fixture.key("done")
            try await writeGenerated(bytes, to: fixture.paths.transferPartialData(key))
            try fixture.recordValidator("done", ResumeValidator(etag: "\"g9-50000\""))
            let events = try await runAttempt(fixture.engine, fixture.download("done", "/done"))
            #expect(events.final == .completed(statusCode: 200))
            #expect(fixture.server.requests(for: "/done").map(\.status) == [416])
            #expect(try await matchesGenerated(fixture.appFolder + "/done.bin", bytes))
        }
    }

    @Test("416 for partial data longer than the entity restarts from zero in the same attempt")
    func rangeNotSatisfiableRestarts() async throws {
        try await withFixture { fixture in
            fixture.server.setRoute("/short", Route(.generated(size: 10_000, seed: 4)))
            let key = fixture.key("short")
            _ = FileManager.default.createFile(atPath: fixture.paths.transferPartialData(key), contents: Data(repeating: 1, count: 20_000))
            try fixture.recordValidator("short", ResumeValidator(etag: "\"g4-10000\""))
            let events = try await runAttempt(fixture.engine, fixture.download("short", "/short"))
            #expect(events.final == .completed(statusCode: 200))
            #expect(fixture.server.requests(for: "/short").map(\.status) == [416, 200])
            #expect(try await matchesGenerated(fixture.appFolder + "/short.bin", GeneratedBytes(size: 10_000, seed: 4)))
        }
    }

    @Test("pause keeps the partial data; the next attempt continues from that byte")
    func pauseThenResume() async throws {
        try await withFixture { fixture in
            let size: Int64 = 600_000
            // The first response trickles 200 KB over a second, then stalls, so the pause always
            // lands mid-body however the test threads are scheduled.
            fixture.server.setRoute("/slow", Route(.generated(size: size, seed: 5),
                                                   nextRequests: [Faults(bytesPerSecond: 200_000, stallSeconds: 10, stallAfter: 200_000)]))
            let (stream, continuation) = AsyncStream<TransferEvent>.makeStream()
            let engine = fixture.engine
            let key = fixture.key("slow")
            // Paused from the event callback itself, so the pause lands while bytes still move.
            try engine.start(fixture.download("slow", "/slow")) { event in
                if event.kind == .progress && event.progress.bytesTransferred > 0 { engine.pause(key) }
                continuation.yield(event)
                if event.isFinal { continuation.finish() }
            }
            var events: [TransferEvent] = []
            for await event in stream { events.append(event) }
            #expect(events.final == .paused)
            let pausedAt = try #require(fixture.partialLength("slow"))
            #expect(pausedAt > 0 && pausedAt <= 200_000)
            #expect(events.last?.progress.bytesTransferred == pausedAt)
            #expect(fixture.engine.runningKeys.isEmpty)
            let resumed = try await runAttempt(fixture.engine, fixture.download("slow", "/slow"))
            #expect(resumed.final == .completed(statusCode: 206))
            #expect(resumed.progressEvents.first?.progress.bytesTransferred == pausedAt)
            #expect(fixture.server.requests(for: "/slow").last?.range == "bytes=\(pausedAt)-")
            #expect(try await holdsExactly(fixture.appFolder + "/slow.bin", GeneratedBytes(size: size, seed: 5), scratch: fixture.root))
        }
    }

    @Test("cancel stops the transfer and removes its partial data")
    func cancelRemovesPartial() async throws {
        try await withFixture { fixture in
            fixture.server.setRoute("/big", Route(.generated(size: 2_000_000, seed: 6), faults: Faults(bytesPerSecond: 500_000)))
            let (stream, continuation) = AsyncStream<TransferEvent>.makeStream()
            let engine = fixture.engine
            let key = fixture.key("big")
            try engine.start(fixture.download("big", "/big")) { event in
                if event.kind == .progress && event.progress.bytesTransferred > 50_000 { engine.cancel(key) }
                continuation.yield(event)
                if event.isFinal { continuation.finish() }
            }
            var final: TransferEvent.Kind?
            for await event in stream where event.isFinal { final = event.kind }
            #expect(final == .cancelled)
            #expect(!fileExists(fixture.paths.transferPartialData(fixture.key("big"))))
            #expect(!fileExists(fixture.appFolder + "/big.bin"))
            #expect(fixture.engine.cancel(fixture.key("big")) == false)
        }
    }
}

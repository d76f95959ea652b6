import Foundation
import LoopbackServer
import TaskState
import Testing
import TransferEngine

@Suite("Progress, memory and idle cost", .serialized)
struct ProgressTests {
    @Test("a 2-second rate-limited download reports about 4 progress events a second, with the rate")
    func progressIsThrottled() async throws {
        try await withFixture { fixture in
            // 400 KB at 200 KB/s: about two seconds, sent in slices of 10 KB (40 writes a second).
            let started = ContinuousClock.now
            let events = try await runAttempt(fixture.engine, fixture.download("bar", "/generated/400000?rate=200000"))
            let elapsed = ContinuousClock.now - started
            #expect(events.final == .completed(statusCode: 200))
            #expect(elapsed >= .milliseconds(1800))
            let progress = events.progressEvents
            // One at the response head, then at most one per 250 ms (fewer when the HTTP client
            // hands bytes over in bursts, as it does on a loaded machine).
            #expect(progress.count >= 2 && progress.count <= 11, "\(progress.count) progress events in \(elapsed)")
            #expect(progress.first?.progress.bytesTransferred == 0)
            #expect(progress.first?.progress.bytesExpected == 400_000)
            let counts = progress.map(\.progress.bytesTransferred)
            #expect(counts == counts.sorted())
            let rates = progress.compactMap(\.progress.bytesPerSecond)
            let lastRate = try #require(rates.last)
            // Never above the server's pace by much; below it when the machine is busy (the other
            // tests run at the same time), so only a loose floor.
            #expect(lastRate > 20_000 && lastRate < 320_000, "rate \(lastRate)")
        }
    }

    @Test("a 256 MiB download keeps the process's peak memory far below the body's size")
    func memoryStaysFlat() async throws {
        try await withFixture { fixture in
            let size: Int64 = 256 * 1024 * 1024
            let before = peakResidentKiB()
            let events = try await runAttempt(fixture.engine, fixture.download("huge", "/generated/\(size)?seed=21", timeout: 30))
            let after = peakResidentKiB()
            #expect(events.final == .completed(statusCode: 200))
            #expect(after - before < 64 * 1024, "peak resident memory grew by \(after - before) KiB")
            #expect(try await matchesGenerated(fixture.appFolder + "/huge.bin", GeneratedBytes(size: size, seed: 21)))
        }
    }

    @Test("several transfers run at once, each to its own exact file")
    func concurrentTransfers() async throws {
        try await withFixture { fixture in
            try await withThrowingTaskGroup(of: (Int, TransferEvent.Kind?).self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let events = try await runAttempt(fixture.engine,
                                                          fixture.download("many\(index)", "/generated/\(300_000 + index)?seed=\(index)&rate=1000000"))
                        return (index, events.final)
                    }
                }
                for try await (index, final) in group {
                    #expect(final == .completed(statusCode: 200), "transfer \(index)")
                    #expect(try await matchesGenerated(fixture.appFolder + "/many\(index).bin",
                                                 GeneratedBytes(size: Int64(300_000 + index), seed: UInt64(index))))
                }
            }
        }
    }

    @Test("the engine holds an HTTP client only while a transfer runs")
    func clientOnlyWhileRunning() async throws {
        try await withFixture { fixture in
            #expect(!fixture.engine.hasHTTPClient)
            #expect(fixture.engine.neverStarted, "a shutdown now has nothing to wait for")
            let (stream, continuation) = AsyncStream<TransferEvent>.makeStream()
            try fixture.engine.start(fixture.download("lazy", "/generated/200000?rate=400000")) { event in
                continuation.yield(event)
                if event.isFinal { continuation.finish() }
            }
            #expect(fixture.engine.hasHTTPClient)
            #expect(!fixture.engine.neverStarted)
            #expect(fixture.engine.runningKeys == [fixture.key("lazy")])
            var final: TransferEvent.Kind?
            for await event in stream where event.isFinal { final = event.kind }
            #expect(final == .completed(statusCode: 200))
            #expect(!fixture.engine.hasHTTPClient)
            #expect(!fixture.engine.neverStarted, "the client's close is still waited for at shutdown")
            #expect(fixture.engine.runningKeys.isEmpty)
        }
    }
}

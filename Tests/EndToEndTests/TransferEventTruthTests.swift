import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// The real `bgtaskd` against the loopback server: `transferStarted … from byte N` only when the
/// server saw a `Range` request for byte N, and `transferPaused … at N bytes` is what the partial
/// file holds.
@Suite struct TransferEventTruthTests {
    static let app = FetcherApp.id
    let size: Int64 = 600_000

    private func events(_ env: TestEnvironment, _ type: Event.Kind, _ id: String) -> [String] {
        env.events(type).filter { $0.identifier?.rawValue == id }.map(\.message)
    }

    @Test func aStartNamesTheByteItsRangeRequestAskedFor() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: ["transferRetryInitialSeconds": 0.2])
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let dropAt = size / 3
        // Both drop the first response after dropAt bytes; one has a strong ETag to resume with,
        // the other no validator at all, so its retry asks for everything again.
        for fault in [FaultCase.dropAtByte, .noValidator] {
            for (path, route) in fault.routes(path: "/\(fault)", size: size, seed: 7, dropAt: dropAt) { server.setRoute(path, route) }
            #expect(try fetcher.download(fault.rawValue, server.url("/\(fault)")).status == 0)
        }
        for fault in [FaultCase.dropAtByte, .noValidator] {
            // A commit writes its files before it appends its events (the last attempt's start and
            // restart may be in the completion's commit): wait for the completion's event too.
            try await env.eventually("\(fault) to complete", timeout: 20) {
                fetcher.transfer(fault.rawValue)?.state == .completed
                    && env.events(.transferCompleted).contains { $0.identifier?.rawValue == fault.rawValue }
            }
        }
        let prefix = "\(Self.app): transfer"
        // The drop lands on a chunk boundary near dropAt; the resume asks for what the file holds.
        let ranges = server.requests(for: "/dropAtByte").map(\.range)
        #expect(ranges.count == 2 && ranges.first == .some(nil), "\(ranges)")
        let resumed = try #require(ranges.last ?? nil)
        #expect(events(env, .transferStarted, "dropAtByte").map { $0.replacingOccurrences(of: " from byte ", with: " bytes=") } == [
            "\(prefix) dropAtByte started (attempt 1)", "\(prefix) dropAtByte started \(resumed.dropLast()) (attempt 2)",
        ], "the event names the byte of the Range the server got")
        #expect(server.requests(for: "/noValidator").allSatisfy { $0.range == nil })
        #expect(events(env, .transferStarted, "noValidator") == [
            "\(prefix) noValidator started (attempt 1)", "\(prefix) noValidator started from byte 0 (attempt 2)",
        ])
        #expect(events(env, .transferRestarted, "noValidator").count == 1, "the restart says why the held bytes went")
        await server.shutdown()
    }

    @Test func aPauseSaysTheBytesThePartialFileHolds() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        // A steady trickle: bytes keep arriving between the record's last count and the stop. After
        // half the entity (some 10 s) it stalls for 600 s, within the download's request timeout
        // of 900 s, so the download is still there to pause however late a busy machine lets the
        // test get to it.
        let server = try await LoopbackServer.start(routes: [
            "/trickle": Route(.generated(size: 6_000_000, seed: 3),
                              faults: Faults(bytesPerSecond: 300_000, stallSeconds: 600, stallAfter: 3_000_000)),
        ])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try fetcher.download("trickle", server.url("/trickle"), "--request-timeout", "900").status == 0)
        let partial = env.paths.transferPartialData(fetcher.key("trickle"))
        try await env.eventually("some bytes", timeout: 30) { (StateFiles.size(of: partial) ?? 0) > 100_000 }
        #expect(try env.bgctl("transfer", "pause", "--app", Self.app, "--id", "trickle").stdout == "paused trickle\n")
        try await env.eventually("the paused event", timeout: 30) { !events(env, .transferPaused, "trickle").isEmpty }
        let onDisk = try #require(StateFiles.size(of: partial))
        #expect(events(env, .transferPaused, "trickle") == ["\(Self.app): transfer trickle paused at \(onDisk) bytes"])
        #expect(fetcher.transfer("trickle")?.bytesTransferred == Int64(onDisk))
        #expect(fetcher.transfer("trickle")?.state == .paused)
        #expect(try env.bgctl("transfer", "cancel", "--app", Self.app, "--id", "trickle").status == 0)
        await server.shutdown()
    }
}

import Crypto
import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Background transfers carried by the real `bgtaskd`, handed over with the real `bgctl`, against
/// an HTTP server on loopback with ranges and fault injection.
@Suite struct TransferTests {
    static let app = FetcherApp.id

    private func expected(size: Int64, seed: UInt64) -> Data {
        Data(GeneratedBytes(size: size, seed: seed).bytes(0..<size))
    }

    @Test func aDownloadSurvivesASchedulerCrashAndArrivesByteExact() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let size: Int64 = 12_000_000
        let server = try await LoopbackServer.start(routes: [
            // The first attempt stalls a third of the way in, so the crash lands mid-transfer; the
            // stall (and the attempt's request timeout) outlast any time a loaded machine keeps
            // the test from looking.
            "/big": Route(.generated(size: size, seed: 5), faults: Faults(bytesPerSecond: 3_000_000),
                          nextRequests: [Faults(bytesPerSecond: 3_000_000, stallSeconds: 600, stallAfter: size / 3)]),
        ])
        let daemon = try env.startDaemon()
        #expect(try fetcher.download("big", server.url("/big"), "--request-timeout", "900").status == 0)
        let partial = env.paths.transferPartialData(TaskKey(app: try Identifier(validating: Self.app), identifier: try Identifier(validating: "big")))
        try await env.eventually("a quarter of the bytes") { (StateFiles.size(of: partial) ?? 0) > Int(size / 4) }
        try await env.eventually("the record to show them") { (fetcher.transfer("big")?.bytesTransferred ?? 0) > size / 4 }

        daemon.crash()
        let kept = try #require(StateFiles.size(of: partial))
        #expect(kept > 0 && kept < Int(size))
        // Progress went to the unsynced side file; the durable record was never rewritten for it.
        // A torn side file (what a crash can leave) costs nothing.
        let key = TaskKey(app: try Identifier(validating: Self.app), identifier: try Identifier(validating: "big"))
        let durable = try JSONFormat.decode(TransferRecord.self, from: try StateFiles.read(env.paths.transfer(key)))
        #expect(durable.state == .running)
        #expect(StateFiles.exists(env.paths.transferProgress(key)))
        try Data("{\"app\": \"com.exa".utf8).write(to: URL(fileURLWithPath: env.paths.transferProgress(key)))

        let second = try env.startDaemon()
        defer { second.stop() }
        try await env.eventually("the download to finish", timeout: 20) { fetcher.transfer("big")?.state == .completed }
        #expect(fetcher.downloaded("big") == expected(size: size, seed: 5))
        #expect(!StateFiles.exists(partial))
        #expect(try FileManager.default.contentsOfDirectory(atPath: env.paths.quarantine).isEmpty, "nothing quarantined")
        // The second scheduler asked for the rest of the same entity, not for all of it again.
        let resumed = server.requests(for: "/big").dropFirst()
        #expect(resumed.contains { ($0.range ?? "").hasPrefix("bytes=") && $0.range != "bytes=0-" && $0.ifRange != nil && $0.status == 206 },
                "\(server.requests(for: "/big"))")
        await server.shutdown()
    }

    @Test func earliestBeginDateIsAFloorAndDiscretionaryWaitsForPower() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("conditions", "set", "power=battery").status == 0)

        #expect(try fetcher.download("later", server.url("/generated/1000?seed=2"), "--earliest", "+1.5").status == 0)
        #expect(try fetcher.download("frugal", server.url("/generated/1000?seed=3"), "--discretionary").status == 0)
        // A commit writes its files before it appends its events (its attempt's start may be in the
        // same commit as its end): wait for the completion's event too.
        try await env.eventually("the dated one to finish") {
            fetcher.transfer("later")?.state == .completed && env.events(.transferCompleted).contains { $0.identifier?.rawValue == "later" }
        }
        let earliest = try #require(fetcher.transfer("later")?.earliestBeginDate)
        let created = try #require(env.events(.transferCreated).first { $0.identifier?.rawValue == "later" })
        let started = try #require(env.events(.transferStarted).first { $0.identifier?.rawValue == "later" })
        #expect(earliest.timeIntervalSince(created.time) > 1.2, "the date was in the future when the transfer was created")
        // Times are written to the millisecond.
        #expect(started.time.timeIntervalSince(earliest) >= -0.001, "started \(started.time.timeIntervalSince(earliest)) s after its date")

        #expect(fetcher.transfer("frugal")?.state == .waiting, "discretionary waits while on battery")
        let listed = try #require((try env.list()["transfers"] as? [[String: Any]])?.first { $0["identifier"] as? String == "frugal" })
        #expect(listed["blockers"] as? [String] == ["externalPower"], "bgctl list says why it waits")
        #expect(listed["isDiscretionary"] as? Bool == true)
        #expect(server.requests(for: "/generated/1000").count == 1)
        #expect(try env.bgctl("conditions", "set", "power=ac").status == 0)
        try await env.eventually("the discretionary one to finish on power") { fetcher.transfer("frugal")?.state == .completed }
        #expect(fetcher.downloaded("frugal") == expected(size: 1000, seed: 3))
        await server.shutdown()
    }

    @Test func transientErrorsRetryWithBackoffAndPermanentOnesFail() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: ["transferRetryInitialSeconds": 0.2])
        let server = try await LoopbackServer.start(routes: [
            "/flaky": Route(.generated(size: 50_000, seed: 9), nextRequests: [Faults(status: 503), Faults(dropAfter: 20_000)]),
            "/gone": Route(.generated(size: 10, seed: 1), faults: Faults(status: 404)),
        ])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try fetcher.download("flaky", server.url("/flaky")).status == 0)
        #expect(try fetcher.download("gone", server.url("/gone")).status == 0)
        try await env.eventually("the flaky one to arrive") { fetcher.transfer("flaky")?.state == .completed }
        #expect(fetcher.transfer("flaky")?.retries == 2)
        #expect(env.events(.transferRetrying).filter { $0.identifier?.rawValue == "flaky" }.count == 2)
        #expect(fetcher.downloaded("flaky") == expected(size: 50_000, seed: 9))

        try await env.eventually("the 404 to fail") { fetcher.transfer("gone")?.state == .failed }
        #expect(fetcher.transfer("gone")?.lastError?.contains("404") == true)
        #expect(fetcher.downloaded("gone") == nil, "no file for a failed download")
        await server.shutdown()
    }

    @Test func pauseResumeAndCancelFromTheCommandLine() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let size: Int64 = 6_000_000
        let server = try await LoopbackServer.start(routes: [
            // The first attempt stalls after 1 MB, so the pause always lands while it runs, however
            // long a loaded machine keeps the test from looking.
            "/slow": Route(.generated(size: size, seed: 11), nextRequests: [Faults(stallSeconds: 600, stallAfter: 1_000_000)]),
            "/doomed": Route(.generated(size: size, seed: 12), faults: Faults(stallSeconds: 600, stallAfter: 500_000)),
        ])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try fetcher.download("slow", server.url("/slow"), "--request-timeout", "900").status == 0)
        #expect(try fetcher.download("doomed", server.url("/doomed"), "--request-timeout", "900").status == 0)
        // The partial file is the truth; the record's count is updated at most four times a second.
        let slowPartial = env.paths.transferPartialData(TaskKey(app: try Identifier(validating: Self.app), identifier: try Identifier(validating: "slow")))
        try await env.eventually("some bytes") { (StateFiles.size(of: slowPartial) ?? 0) > 0 }

        let paused = try env.bgctl("transfer", "pause", "--app", Self.app, "--id", "slow")
        #expect(paused.stdout == "paused slow\n", "\(paused)")
        #expect(fetcher.transfer("slow")?.state == .paused)
        let cancelled = try env.bgctl("transfer", "cancel", "--app", Self.app, "--id", "doomed")
        #expect(cancelled.stdout == "cancelled doomed\n", "\(cancelled)")
        try await env.eventually("the cancelled one's partial data to go") {
            !StateFiles.exists(env.paths.transferPartialData(TaskKey(app: try Identifier(validating: Self.app), identifier: try Identifier(validating: "doomed"))))
        }
        #expect(fetcher.transfer("doomed")?.state == .cancelled)

        #expect(try env.bgctl("transfer", "resume", "--app", Self.app, "--id", "slow").stdout == "resumed slow\n")
        try await env.eventually("the resumed one to finish") { fetcher.transfer("slow")?.state == .completed }
        #expect(fetcher.downloaded("slow") == expected(size: size, seed: 11))
        #expect(server.requests(for: "/slow").count >= 2)
        #expect(server.requests(for: "/slow").last?.status == 206, "resumed with a range")
        let again = try env.bgctl("transfer", "pause", "--app", Self.app, "--id", "slow")
        #expect(again.status == 1)
        #expect(again.stderr == "bgctl: noSuchTask: no active transfer with identifier slow for \(Self.app)\n")
        await server.shutdown()
    }

    @Test func uploadsArriveByteExact() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let source = env.root + "/photo.heic"
        let bytes = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        let result = try env.bgctl("transfer", "upload", "--app", Self.app, "--id", "photo", server.url("/upload/photo.heic"), source)
        #expect(result.status == 0, "\(result)")
        try await env.eventually("the upload") { fetcher.transfer("photo")?.state == .completed }
        var hash = SHA256()
        hash.update(data: bytes)
        let received = try #require(server.receivedUpload("/upload/photo.heic"))
        #expect(received.byteCount == 3_000_000)
        #expect(received.sha256 == hash.finalize().hexDigest)
        await server.shutdown()
    }

    @Test func badTransfersAreRefusedInOneLine() throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let escape = try env.run(TestEnvironment.binaries + "/bgctl",
                                 ["transfer", "download", "--app", Self.app, "--id", "x", "http://127.0.0.1:9/x", "--to", "../outside",
                                  "--state", env.state, "--config", env.config])
        #expect(escape.status == 1)
        #expect(escape.stderr.hasPrefix("bgctl: invalidCommand: a download needs a destination: a file name inside the app's downloads folder"))
        let ftp = try fetcher.download("y", "ftp://127.0.0.1/file")
        #expect(ftp.status == 1)
        #expect(ftp.stderr == "bgctl: invalidCommand: 'ftp://127.0.0.1/file' is not an http or https URL\n")
        #expect(try env.list()["transfers"] as? [Any] == nil || (try env.list()["transfers"] as? [Any])?.isEmpty == true)
        #expect(daemon.isRunning)
    }
}

import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// `BGURLSession.download(for:)` and `upload(for:fromFile:)`: carried by the real scheduler from
/// the start, returned to the awaiting call, cancelled with it — or promoted in its `onCancel`,
/// as Stormy does in the 2022 talk, and then finished after the app has gone.
@Suite struct AsyncTransferTests {
    /// The fixture as an app whose refresh handler awaits `download(for:)` of `url`.
    ///
    /// Nothing here may end by time while a test on a loaded machine has not got to it yet: the
    /// handler's budget is 600 s (the tests expire it with `simulate-expiration`), and the session's
    /// request timeout 900 s, so a response the server holds back is waited for, not cut and asked
    /// for again.
    private func addAwaitingFixture(_ env: TestEnvironment, url: String, promote: String?) throws {
        try env.writeSettings(["appRefreshBudgetSeconds": 600])
        try env.addLibraryApp(TestEnvironment.fixtureID, product: "TaskAppFixture",
                              arguments: ["await", "download", url, "--in-handler", "--record=\(env.fixtureRecord)",
                                          "--ids=\(TestEnvironment.refreshID)", "--request-timeout=900"]
                                  + (promote.map { ["--promote=\($0)"] } ?? []),
                              identifiers: [TestEnvironment.refreshID])
    }

    /// A server whose `/held` entity (`size` bytes of `seed`) stops after its first 100 000 bytes,
    /// on the first request only, for 600 s (within the fixture's 900 s request timeout): however
    /// long a loaded machine keeps the test from looking, the awaited download is still under way
    /// when it does (a paced body left a window of seconds, which a starved test could miss). Range
    /// continuations are not held.
    private func heldServer(size: Int64, seed: UInt64) async throws -> LoopbackServer {
        try await LoopbackServer.start(routes: [
            "/held": Route(.generated(size: size, seed: seed), nextRequests: [Faults(stallSeconds: 600, stallAfter: 100_000)]),
        ])
    }

    /// Launches the refresh and waits until the awaited download has moved bytes; pauses it there,
    /// then expires the handler's budget (the same path as a real expiry). Returns the transfer's
    /// identifier.
    private func expireInTheMiddle(_ env: TestEnvironment) async throws -> String {
        try env.launchFixtureTask()
        var identifier: String?
        do {
            try await env.eventually("the awaited download to be under way", timeout: 30) {
                let transfers = (try env.list()["transfers"] as? [[String: Any]]) ?? []
                identifier = transfers.first { ($0["bytesTransferred"] as? Int ?? 0) > 0 }?["identifier"] as? String
                return identifier != nil
            }
        } catch {
            throw TestFailure("\(error); events: \(env.events().map(\.message)); list: \((try? env.bgctl("list", "--json").stdout) ?? "")")
        }
        let id = try #require(identifier)
        let paused = try env.bgctl("transfer", "pause", "--app", TestEnvironment.fixtureID, "--id", id)
        #expect(paused.status == 0, "\(paused)")
        #expect(try env.bgctl("simulate-expiration", TestEnvironment.refreshID).status == 0)
        return id
    }

    /// Waits until the handler's process has exited (it records `exiting` just before).
    private func handlerProcessExited(_ env: TestEnvironment) async throws {
        try await env.eventually("the handler's process to exit", timeout: 20) {
            guard let exiting = env.fixtureEvents("exiting").first else { return false }
            return !processIsAlive(exiting.pid)
        }
    }

    /// Waits until no process that recorded anything runs any more.
    private func everyProcessExited(_ env: TestEnvironment) async throws {
        try await env.eventually("every process of the app to exit", timeout: 20) {
            Set(env.fixtureEvents().map(\.pid)).allSatisfy { !processIsAlive($0) }
        }
    }

    private func file(_ detail: String) -> (path: String, size: Int)? {
        let parts = detail.split(separator: " ")
        guard parts.count >= 2, let size = Int(parts[1]) else { return nil }
        return (String(parts[0]), size)
    }

    @Test func downloadForReturnsTheExactFileAndTheRealResponse() async throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "await")
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let size: Int64 = 200_000
        let ran = try env.runFixture(["await", "download", server.url("/generated/\(size)?seed=9")])
        #expect(ran.status == 0, "\(ran)")
        let awaited = try #require(env.fixtureEvents("awaited").first, "\(env.fixtureEvents())")
        let (path, _) = try #require(file(awaited.detail))
        #expect(path.hasPrefix("\(env.state)/downloads/\(TestEnvironment.fixtureID)/"))
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data == Data(GeneratedBytes(size: size, seed: 9).bytes(0..<size)), "byte-exact")
        #expect(awaited.detail.contains("status=200 type=application/octet-stream"), "\(awaited.detail)")
        #expect(!awaited.detail.contains("etag=-"), "the server's ETag is in the response: \(awaited.detail)")
        #expect(server.requests(for: "/generated/\(size)").map { $0.values("X-Trace") } == [["fixture"]])
        #expect(env.fixtureEvents("session-complete").isEmpty, "the delegate is not told of an awaited transfer")
        try await env.eventually("the end to be acknowledged") { (try env.list()["transfers"] as? [Any])?.isEmpty == true }
        #expect(env.events(.transferCreated).count == 1)
        await server.shutdown()
    }

    @Test func aFailedOrRefusedDownloadThrowsWithTheSchedulersWordsAndAnUploadReturnsTheAnswer() async throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "await")
        let upload = "\(env.root)/received.bin"
        let server = try await LoopbackServer.start(routes: ["/up": Route(.uploadTarget(saveTo: upload))])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.runFixture(["await", "download", server.url("/generated/1000?status=404")]).status == 0)
        let threw = try #require(env.fixtureEvents("await-threw").first, "\(env.fixtureEvents())")
        #expect(threw.detail.hasPrefix("BGURLSessionError failed: ") && threw.detail.contains("404"), "\(threw.detail)")
        #expect(env.fixtureEvents("awaited").isEmpty)
        // Refused when it is created: no transfer, and the call says why.
        #expect(try env.runFixture(["await", "download", "ftp://127.0.0.1/weather.json"]).status == 0)
        let refused = try #require(env.fixtureEvents("await-threw").last)
        #expect(refused.detail == "BGURLSessionError refused: 'ftp://127.0.0.1/weather.json' is not an http or https URL", "\(refused.detail)")
        #expect(env.events(.transferCreated).count == 1)

        let source = "\(env.root)/photo.bin"
        try Data(repeating: 7, count: 30_000).write(to: URL(fileURLWithPath: source))
        #expect(try env.runFixture(["await", "upload", server.url("/up"), source, "--method=PUT"]).status == 0)
        let answered = try #require(env.fixtureEvents("awaited").first, "\(env.fixtureEvents())")
        #expect(answered.detail.hasPrefix("status=201 type=text/plain"), "\(answered.detail)")
        #expect(answered.detail.contains("body={\"bytes\":30000,\"sha256\":\""), "\(answered.detail)")
        #expect(server.receivedUpload("/up")?.byteCount == 30_000)
        #expect(env.fixtureEvents("session-complete").isEmpty, "the delegate is not told of an awaited transfer")
        await server.shutdown()
    }

    @Test func aPromotedDownloadOutlivesItsHandlerAndReachesTheRelaunchedApp() async throws {
        let env = try TestEnvironment()
        let size: Int64 = 400_000
        let server = try await heldServer(size: size, seed: 31)
        try addAwaitingFixture(env, url: server.url("/held"), promote: "same")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("conditions", "set", "power=ac", "network=up").status == 0)
        let id = try await expireInTheMiddle(env)
        try await handlerProcessExited(env)
        #expect(env.fixtureEvents("await-threw").first?.detail == "CancellationError", "\(env.fixtureEvents())")
        // Promoted: after its app has gone, it is still there to go on.
        #expect(try env.bgctl("transfer", "resume", "--app", TestEnvironment.fixtureID, "--id", id).status == 0)

        try await env.eventually("the relaunched app to get the file", timeout: 30) { !env.fixtureEvents("downloaded").isEmpty }
        let started = try #require(env.fixtureEvents("started").first)
        #expect(env.fixtureEvents("promoted").count == 1)
        let downloaded = try #require(env.fixtureEvents("downloaded").first)
        #expect(downloaded.identifier == id)
        #expect(downloaded.pid != started.pid, "a new process, launched for the session, heard of it")
        #expect(env.fixtureEvents("session-handler").first?.detail == "urlSession")
        let (path, _) = try #require(file(downloaded.detail))
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data == Data(GeneratedBytes(size: size, seed: 31).bytes(0..<size)), "byte-exact")
        // One transfer, never asked for again from byte 0.
        #expect(env.events(.transferCreated).count == 1)
        #expect(env.events(.transferCancelled).isEmpty)
        let requests = server.requests(for: "/held")
        #expect(requests.first?.range == nil)
        #expect(requests.count >= 2 && requests.dropFirst().allSatisfy { $0.range != nil && $0.range != "bytes=0-" }, "\(requests)")
        try await everyProcessExited(env)
        await server.shutdown()
    }

    @Test func withoutAPromotionTheTransferIsCancelledWithItsTask() async throws {
        let env = try TestEnvironment()
        let server = try await heldServer(size: 400_000, seed: 32)
        try addAwaitingFixture(env, url: server.url("/held"), promote: nil)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("conditions", "set", "power=ac", "network=up").status == 0)
        let id = try await expireInTheMiddle(env)

        try await handlerProcessExited(env)
        #expect(env.fixtureEvents("await-threw").first?.detail == "CancellationError", "\(env.fixtureEvents())")
        try await env.eventually("the transfer to be cancelled") { env.events(.transferCancelled).count == 1 }
        #expect(env.events(.transferCancelled).first?.identifier?.rawValue == id)
        try await env.eventually("its end to be acknowledged unheard") { (try env.list()["transfers"] as? [Any])?.isEmpty == true }
        #expect(env.fixtureEvents("session-complete").isEmpty)
        #expect(env.events(.launched).filter { $0.reason == "urlSession" }.isEmpty, "a cancelled transfer launches nothing")
        #expect(server.requests(for: "/held").count == 1)
        await server.shutdown()
    }

    @Test func aPromotionWithAnotherHeaderIsANewTransferAndSaysWhy() async throws {
        let env = try TestEnvironment()
        let server = try await heldServer(size: 400_000, seed: 33)
        try addAwaitingFixture(env, url: server.url("/held"), promote: "header")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("conditions", "set", "power=ac", "network=up").status == 0)
        let id = try await expireInTheMiddle(env)

        try await handlerProcessExited(env)
        let other = try #require(env.fixtureEvents("promoted-different").first)
        #expect(other.identifier != id)
        try await env.eventually("two transfers, the awaited one cancelled") {
            env.events(.transferCreated).count == 2 && env.events(.transferCancelled).count == 1
        }
        #expect(env.events(.transferCancelled).first?.identifier?.rawValue == id)
        #expect(env.appLog(TestEnvironment.fixtureID).contains("download task \(other.identifier) is a new transfer, not the awaited"))
        #expect(env.appLog(TestEnvironment.fixtureID).contains(": header x-trace differs"), "\(env.appLog(TestEnvironment.fixtureID))")
        // The new one is an ordinary transfer of the session: its delegate hears of it (in the
        // app's process if it ends before that exits, else in one launched for the session).
        try await env.eventually("the new transfer to reach the delegate", timeout: 30) {
            env.fixtureEvents("downloaded").contains { $0.identifier == other.identifier }
        }
        #expect(server.requests(for: "/held").contains { $0.values("X-Trace") == ["other"] })
        try await everyProcessExited(env)
        await server.shutdown()
    }

    @Test func twoAppsWithOneSessionIdentifierDoNotSeeEachOthersTransfers() async throws {
        let env = try TestEnvironment()
        // The first request (the first app's) is held unanswered until the other app has looked,
        // so the first app's transfer is still live then, however late the test gets there.
        let hold = ResponseHold()
        let server = try await LoopbackServer.start(routes: [
            "/shared": Route(.generated(size: 200_000, seed: 34), nextRequests: [Faults(hold: hold)]),
        ])
        let url = server.url("/shared")
        try addAwaitingFixture(env, url: url, promote: "same")
        let otherApp = "com.example.otherapp"
        let otherRecord = "\(env.root)/other.jsonl"
        try env.addLibraryApp(otherApp, product: "TaskAppFixture", arguments: ["await", "--record=\(otherRecord)"], identifiers: [])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("conditions", "set", "power=ac", "network=up").status == 0)
        try env.launchFixtureTask()
        try await env.eventually("the awaited download's request to be held by the server", timeout: 30) { hold.arrivals > 0 }
        // The other app makes a task for the same request in a session of the same identifier.
        var environment = env.appEnvironment
        environment["BGTASK_APP_ID"] = otherApp
        let ran = try env.run(TestEnvironment.binaries + "/TaskAppFixture", ["await", "tasks", url, "--record=\(otherRecord)"],
                              environment: environment)
        #expect(ran.status == 0, "\(ran)")
        let lines = (try? String(contentsOfFile: otherRecord, encoding: .utf8)) ?? ""
        let records = lines.split(separator: "\n").compactMap { try? JSONDecoder().decode(FixtureEvent.self, from: Data($0.utf8)) }
        let handed = try #require(records.first { $0.event == "handed-over" })
        #expect(records.first { $0.event == "all-tasks" }?.detail == handed.identifier, "only its own transfer: \(records)")
        let live = ((try env.list()["transfers"] as? [[String: Any]]) ?? []).filter { $0["app"] as? String == TestEnvironment.fixtureID }
        #expect(live.map { $0["state"] as? String } == ["running"], "the first app's transfer was there to be seen: \(live)")

        hold.release()
        try await env.eventually("the first app's call to return its file", timeout: 20) { !env.fixtureEvents("awaited").isEmpty }
        let created = env.events(.transferCreated)
        #expect(Set(created.compactMap { $0.app?.rawValue }) == [TestEnvironment.fixtureID, otherApp], "two transfers, one per app")
        #expect(env.fixtureEvents("promoted").isEmpty && env.fixtureEvents("session-complete").isEmpty,
                "the first app heard nothing of the other's transfer")
        #expect(server.requests(for: "/shared").count >= 2, "each app's transfer asked for itself")
        try await env.eventually("the other app to be launched for its own transfer", timeout: 20) {
            ((try? String(contentsOfFile: otherRecord, encoding: .utf8)) ?? "").contains("\"downloaded\"")
        }
        let otherPIDs = ((try? String(contentsOfFile: otherRecord, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { try? JSONDecoder().decode(FixtureEvent.self, from: Data($0.utf8)).pid }
        try await everyProcessExited(env)
        try await env.eventually("the other app's processes to exit") { otherPIDs.allSatisfy { !processIsAlive($0) } }
        await server.shutdown()
    }
}

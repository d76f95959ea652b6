import Crypto
import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The examples, run as a user would: started by hand to schedule, then launched by the scheduler.
@Suite struct ExampleAppTests {
    static let stormy = "com.example.stormy"
    static let stormyRefresh = "com.example.stormy.refresh"
    static let tidy = "com.example.tidy"
    static let tidyClean = "com.example.tidy.clean"

    private func setUpStormy(_ env: TestEnvironment, weatherURL: String) throws {
        let config = env.root + "/stormy-config.json"
        try env.writeJSON(["weatherURL": weatherURL], to: config)
        try env.addLibraryApp(Self.stormy, product: "Stormy", arguments: ["--config", config],
                              identifiers: [Self.stormyRefresh], modes: ["fetch", "remote-notification"])
    }

    private func noonTomorrow() -> Date {
        let calendar = Calendar.current
        let tomorrow = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: Date()))!
        return calendar.date(bySettingHour: 12, minute: 0, second: 0, of: tomorrow)!
    }

    private func pendingEarliest(_ env: TestEnvironment) throws -> Date? {
        let text = try env.requests().first?["earliestBeginDate"] as? String
        return text.flatMap(JSONFormat.date(from:))
    }

    @Test func stormyChecksTheWeatherAtNoonNotifiesAndSchedulesTomorrow() throws {
        let env = try TestEnvironment()
        let server = try LoopbackFileServer(root: env.root + "/www")
        defer { server.stop() }
        try #"{"condition": "storm"}"#.write(toFile: env.root + "/www/weather.json", atomically: true, encoding: .utf8)
        try setUpStormy(env, weatherURL: "http://127.0.0.1:\(server.port)/weather.json")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // Opened by the user, who asks for daily storm checks: it finds its manifest by its own path.
        let opened = try env.run(TestEnvironment.binaries + "/Stormy", ["--schedule", "--config", env.root + "/stormy-config.json"],
                                 environment: env.appEnvironment)
        #expect(opened.status == 0, "\(opened)")
        #expect(opened.stdout.contains("scheduled for noon"))
        #expect(try pendingEarliest(env) == noonTomorrow())

        // Noon, as the debugger command makes it. The check is a background download made in the
        // background, so discretionary: on external power it goes at once, whatever this machine's power.
        #expect(try env.bgctl("conditions", "set", "power=ac", "network=up").status == 0)
        #expect(try env.bgctl("simulate-launch", Self.stormyRefresh).status == 0)
        try env.waitUntil("the refresh to complete", timeout: 20) { !env.events(.completed).isEmpty }
        #expect(env.events(.completed).first?.reason == "success")
        // Its output reaches the log when it exits (stdout to a file is block-buffered).
        try env.waitUntil("Stormy's log") { env.appLog(Self.stormy).contains("Stormy: notification:") }
        let log = env.appLog(Self.stormy)
        #expect(log.contains("Stormy: the weather is storm"), "\(log)")
        #expect(log.contains("Stormy: notification: It's stormy outside! Take a photo of the sky."), "\(log)")
        #expect(try pendingEarliest(env) == noonTomorrow(), "the handler scheduled tomorrow's refresh")
        #expect(server.requests.contains("/weather.json"))
    }

    @Test func stormyWithoutAWeatherServiceStillCompletesAndStaysScheduled() throws {
        let env = try TestEnvironment()
        // A port nothing listens on: connection refused. A background download waits and
        // retries, so the handler's (short) budget runs out first and the check is promoted.
        try env.writeSettings(["appRefreshBudgetSeconds": 2])
        try setUpStormy(env, weatherURL: "http://127.0.0.1:9/weather.json")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.run(TestEnvironment.binaries + "/Stormy", ["--schedule", "--config", env.root + "/stormy-config.json"],
                            environment: env.appEnvironment).status == 0)
        #expect(try env.bgctl("simulate-launch", Self.stormyRefresh).status == 0)
        try env.waitUntil("the refresh to complete", timeout: 20) { !env.events(.completed).isEmpty }
        try env.waitUntil("Stormy's log") { env.appLog(Self.stormy).contains("Stormy: out of background time") }
        let log = env.appLog(Self.stormy)
        #expect(log.contains("Stormy: out of background time; the weather check goes on in the background"), "\(log)")
        #expect(!log.contains("notification"))
        #expect(try pendingEarliest(env) == noonTomorrow())
        #expect(env.events(.transferCreated).count == 1 && env.events(.transferCancelled).isEmpty, "the check is kept, not dropped")
    }

    @Test func stormysStormWarningFetchesTheForecastAtOnceAndAnswersHowItWent() throws {
        let env = try TestEnvironment()
        let server = try LoopbackFileServer(root: env.root + "/www")
        defer { server.stop() }
        let weather = env.root + "/www/weather.json"
        try setUpStormy(env, weatherURL: "http://127.0.0.1:\(server.port)/weather.json")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let warning = #"{"aps":{"content-available":1},"storm":{"region":"north"}}"#

        // Stormy is not running: each warning launches it to check the weather now, not at noon.
        let rounds: [(weather: String?, answer: String, says: String)] = [
            (#"{"condition": "storm"}"#, "newData", "Stormy: notification: It's stormy outside! Take a photo of the sky."),
            (#"{"condition": "sunny"}"#, "noData", "Stormy: the weather is sunny"),
            (nil, "failed", "Stormy: the weather service answered 404"),
        ]
        for (index, round) in rounds.enumerated() {
            if let text = round.weather {
                try text.write(toFile: weather, atomically: true, encoding: .utf8)
            } else {
                try FileManager.default.removeItem(atPath: weather)
            }
            let sent = try env.bgctl("push", Self.stormy, "--payload", warning)
            #expect(sent.status == 0, "\(sent)")
            #expect(sent.stdout.contains("launched \(Self.stormy) (pid"), "\(sent)")
            try env.waitUntil("warning \(index) to be answered", timeout: 20) { env.events(.completed).count == index + 1 }
            let completed = try #require(env.events(.completed).last)
            #expect(completed.kind == .remoteNotification)
            #expect(completed.reason == round.answer)
            // Its output reaches the log when it exits (stdout to a file is block-buffered).
            try env.waitUntil("Stormy's log of warning \(index)") { env.appLog(Self.stormy).contains(round.says) }
            try env.waitUntil("Stormy to exit") { env.events(.detached).count == index + 1 }
        }
        let log = env.appLog(Self.stormy)
        #expect(log.components(separatedBy: "Stormy: storm warning for north; checking the forecast now").count == 4, "\(log)")
        #expect(log.components(separatedBy: "Stormy: notification:").count == 2, "one notification, on the stormy day: \(log)")
        #expect(server.requests.filter { $0 == "/weather.json" }.count == 3)
        #expect(try env.requests().isEmpty, "a warning schedules nothing")
        let apps = try env.bgctl("apps", "--json")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(apps.stdout.utf8)) as? [String: Any])
        let stormy = (report["apps"] as? [[String: Any]])?.first { $0["id"] as? String == Self.stormy }
        #expect(stormy?["lastPushResult"] as? String == "failed")
    }

    /// The 2022 talk's Stormy: the weather check outlives its handler's budget (promoted in
    /// `onCancel`), and the answer reaches Stormy when it is launched for the weather session.
    @Test func stormysWeatherCheckOutlivesItsBudgetAndNotifiesWhenItArrives() async throws {
        let env = try TestEnvironment()
        let forecast = env.root + "/forecast.json"
        try #"{"condition": "storm", "note": "a slow answer, sent a few bytes a second"}"#
            .write(toFile: forecast, atomically: true, encoding: .utf8)
        let server = try await LoopbackServer.start(routes: ["/weather.json": Route(.file(forecast), faults: Faults(bytesPerSecond: 12))])
        try env.writeSettings(["appRefreshBudgetSeconds": 2])
        try setUpStormy(env, weatherURL: server.url("/weather.json"))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("conditions", "set", "power=ac", "network=up").status == 0)
        #expect(try env.run(TestEnvironment.binaries + "/Stormy", ["--schedule", "--config", env.root + "/stormy-config.json"],
                            environment: env.appEnvironment).status == 0)
        #expect(try env.bgctl("simulate-launch", Self.stormyRefresh).status == 0)
        try await env.eventually("Stormy to be launched for its weather session and notify", timeout: 30) {
            env.appLog(Self.stormy).contains("Stormy: notification: It's stormy outside!")
        }
        let log = env.appLog(Self.stormy)
        #expect(log.contains("Stormy: out of background time; the weather check goes on in the background"), "\(log)")
        #expect(log.contains("Stormy: the weather is storm"), "\(log)")
        let launched = try #require(env.events(.launched).first { $0.reason == "urlSession" })
        #expect(launched.identifier?.rawValue == "com.example.stormy.weather")
        #expect(server.requests(for: "/weather.json").count == 1, "one request, not a second one for the promotion")
        #expect(env.events(.transferCreated).count == 1)
        try await env.eventually("the launch for the session to complete") { env.events(.completed).contains { $0.kind == .urlSession } }
        // Every process the scheduler launched for it has ended (the ledger is empty).
        try await env.eventually("every Stormy process to exit", timeout: 20) {
            (try? JSONFormat.decode(ProcessLedger.self, from: try StateFiles.read(env.paths.processes)))?.processes.isEmpty == true
        }
        await server.shutdown()
    }

    @Test func stormyUploadsItsPhotoInTheBackgroundAndHearsWhenItIsDone() async throws {
        let env = try TestEnvironment()
        let server = try await LoopbackServer.start(routes: [
            "/weather.json": Route(.generated(size: 10, seed: 1)),
        ])
        let config = env.root + "/stormy-config.json"
        try env.writeJSON(["weatherURL": server.url("/weather.json"), "uploadURL": server.url("/sky")], to: config)
        try env.addLibraryApp(Self.stormy, product: "Stormy", arguments: ["--config", config],
                              identifiers: [Self.stormyRefresh], modes: ["fetch", "remote-notification"])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let photo = env.root + "/sky.jpg"
        let bytes = (0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        try Data(bytes).write(to: URL(fileURLWithPath: photo))

        let opened = try env.run(TestEnvironment.binaries + "/Stormy", ["--upload", photo, "--config", config],
                                 environment: env.appEnvironment)
        #expect(opened.status == 0, "\(opened)")
        #expect(opened.stdout.contains("Stormy: uploading \(photo) in the background"))
        try await env.eventually("the upload to arrive", timeout: 15) { server.receivedUpload("/sky/sky.jpg")?.isComplete == true }
        var hash = SHA256()
        hash.update(data: bytes)
        #expect(server.receivedUpload("/sky/sky.jpg")?.sha256 == hash.finalize().hexDigest)
        // Stormy hears of it: live if it was still running, else launched for its session.
        // (BackgroundSessionTests pins the launch path down with a delayed transfer.)
        try await env.eventually("Stormy to post its notification", timeout: 15) {
            (opened.stdout + env.appLog(Self.stormy)).contains("Stormy: notification: Your photo of the sky is uploaded.")
        }
        try await env.eventually("the transfer to be acknowledged") { (try env.list()["transfers"] as? [Any])?.isEmpty == true }
        await server.shutdown()
    }

    @Test func tidyCleansInChunksStopsCleanlyOnExpiryAndFinishesNextTime() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["processingBudgetSeconds": 1])
        let cache = env.root + "/cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        for index in 0..<300 {
            try Data("cached \(index)\n".utf8).write(to: URL(fileURLWithPath: String(format: "%@/item-%04d", cache, index)))
        }
        try env.addLibraryApp(Self.tidy, product: "Tidy", arguments: ["--folder", cache, "--chunk", "5", "--pause", "20"],
                              identifiers: [Self.tidyClean], modes: ["processing"])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // On battery the request waits (whatever this machine's real power and load are).
        #expect(try env.bgctl("conditions", "set", "power=battery").status == 0)

        let scheduled = try env.run(TestEnvironment.binaries + "/Tidy", ["--schedule", "--folder", cache],
                                    environment: env.appEnvironment)
        #expect(scheduled.status == 0, "\(scheduled)")
        let pending = try #require(try env.requests().first)
        #expect(pending["requiresExternalPower"] as? Bool == true)
        #expect((pending["blockers"] as? [String])?.contains("externalPower") == true)

        // A one-second budget is not enough for 60 chunks with a 20 ms pause each.
        #expect(try env.bgctl("simulate-launch", Self.tidyClean).status == 0)
        try env.waitUntil("the first run to end") { !env.events(.completed).isEmpty }
        #expect(env.events(.completed).first?.reason == "failure")
        #expect(env.events(.expired).count == 1)
        #expect(env.events(.killed).isEmpty, "it stopped within its grace period")
        let left = try FileManager.default.contentsOfDirectory(atPath: cache).count
        #expect(left > 0 && left < 300)
        try env.waitUntil("Tidy's log") { env.appLog(Self.tidy).contains("Tidy: out of time") }
        #expect(env.appLog(Self.tidy).contains("Tidy: out of time after removing \(300 - left) files; \(left) left for the next run"))
        #expect(try env.requests().first?["requiresExternalPower"] as? Bool == true, "it asked to run again")

        for run in 2...6 where try !FileManager.default.contentsOfDirectory(atPath: cache).isEmpty {
            #expect(try env.bgctl("simulate-launch", Self.tidyClean).status == 0)
            try env.waitUntil("run \(run) to end") { env.events(.completed).count == run }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache).isEmpty)
        #expect(env.events(.completed).last?.reason == "success")
        try env.waitUntil("the last Tidy's log") { env.appLog(Self.tidy).contains("is empty") }
        #expect(try env.requests().isEmpty)
    }
}

import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// The background-transfer policy (SchedulerCore/Transfers.swift), driven through the public
/// command path and the calls the daemon makes: `dueTransfers`, `transferProgressed`,
/// `transferEnded`, `requeueInterruptedTransfers`, `forgetFinishedTransfers`.
@Suite("TransferPolicy")
struct TransferPolicyTests {
    // MARK: - Creating

    @Test("createTransfer refuses unknown and disabled apps, bad URLs, bad destinations and sources; nothing changes")
    func createRefusals() {
        var state = makeState()
        expectRefused(&state, download("ghost", app: Apps.ghost), "unknownApp", "app com.example.ghost has no usable manifest")
        expectRefused(&state, download("ftp", url: "ftp://example.com/file.bin"), "invalidCommand",
                      "'ftp://example.com/file.bin' is not an http or https URL")
        expectRefused(&state, download("file", url: "file:///etc/passwd"), "invalidCommand",
                      "'file:///etc/passwd' is not an http or https URL")
        expectRefused(&state, download("nohost", url: "http:///file.bin"), "invalidCommand",
                      "'http:///file.bin' is not an http or https URL")
        expectRefused(&state, download("noscheme", url: "example.com/file.bin"), "invalidCommand",
                      "'example.com/file.bin' is not an http or https URL")
        // "../\u{301}x": a "/" that a combining mark follows holds no "/" for String, only in bytes.
        for destination in [nil, "", "sub/file.bin", "/tmp/file.bin", "..", ".", "../\u{301}x", "a\0\u{301}"] as [String?] {
            expectRefused(&state, download("dest", destination: destination), "invalidCommand",
                          "a download needs a destination: a file name inside the app's downloads folder (no '/', not '.' or '..'), not '\(destination ?? "")'")
        }
        for source in [nil, "", "relative/file.bin"] as [String?] {
            expectRefused(&state, upload("up", source: source), "invalidCommand",
                          "an upload needs the absolute path of the file to send")
        }
        #expect(state.transfers.isEmpty)

        state.run(.setAppEnabled(app: Apps.news, enabled: false), at: at(1))
        _ = state.takeChanges()
        expectRefused(&state, download("off"), "unavailable", "background work is switched off for com.example.news", at: at(2))
    }

    @Test("a valid download or upload is recorded waiting, with every field of the request")
    func createRecordsTheRequest() throws {
        var state = makeState()
        let request = TransferRequest(
            app: Apps.news, identifier: ident("feed"), session: "com.example.news.bg", direction: .download,
            url: "HTTPS://example.com/feed.json", destination: "feed.json", earliestBeginDate: at(60),
            sessionSendsLaunchEvents: true, countOfBytesClientExpectsToReceive: 4096,
            timeoutIntervalForRequest: 30, timeoutIntervalForResource: 3600)
        let result = state.createTransfer(request, at: t0)
        #expect(result.outcome.error == nil)
        #expect(result.outcome.message == "download feed of HTTPS://example.com/feed.json created")
        #expect(result.outcome.identifier == ident("feed"))
        let record = try #require(state.transfer("feed"))
        #expect(record == TransferRecord(
            app: Apps.news, identifier: ident("feed"), session: "com.example.news.bg", direction: .download,
            url: "HTTPS://example.com/feed.json", state: .waiting, bytesExpected: 4096, earliestBeginDate: at(60),
            isDiscretionary: false, createdAt: t0, updatedAt: t0, destination: "feed.json",
            countOfBytesClientExpectsToReceive: 4096, timeoutIntervalForRequest: 30, timeoutIntervalForResource: 3600,
            sessionSendsLaunchEvents: true))
        #expect(record.resourceDeadline == at(3600))
        let changes = state.takeChanges()
        #expect(changes.transfers == [transferKey("feed")])
        #expect(changes.eventTypes == [.transferCreated])
        #expect(changes.events.first?.reason == "download")

        state.createTransfer(upload("log", expects: 1500), at: at(1))
        let sent = try #require(state.transfer("log"))
        #expect(sent.direction == .upload)
        #expect(sent.sourceFile == "/tmp/upload.bin")
        #expect(sent.destination == nil)
        #expect(sent.bytesExpected == 1500, "an upload's expected size is countOfBytesClientExpectsToSend")
    }

    @Test("an active transfer with the same app and identifier refuses a new one; a finished one is replaced")
    func sameKey() throws {
        var state = makeState()
        state.createTransfer(download("dl"), at: t0)
        expectRefused(&state, download("dl"), "alreadyRunning", "transfer dl of com.example.news is already waiting", at: at(1))
        #expect(state.startDue(at: at(1)) == [transferKey("dl")])
        expectRefused(&state, download("dl"), "alreadyRunning", "transfer dl of com.example.news is already running", at: at(2))
        state.run(.transferPause(app: Apps.news, identifier: ident("dl")), at: at(3))
        expectRefused(&state, download("dl"), "alreadyRunning", "transfer dl of com.example.news is already paused", at: at(4))
        // The same identifier in another app is another transfer.
        #expect(state.createTransfer(download("dl", app: Apps.mail), at: at(4)).outcome.error == nil)

        state.run(.transferCancel(app: Apps.news, identifier: ident("dl")), at: at(5))
        #expect(state.transfer("dl")?.state == .cancelled)
        let replaced = state.createTransfer(download("dl", url: "http://127.0.0.1:8080/other"), at: at(6))
        #expect(replaced.outcome.error == nil)
        let record = try #require(state.transfer("dl"))
        #expect(record.state == .waiting)
        #expect(record.url == "http://127.0.0.1:8080/other")
        #expect(record.createdAt == at(6))
        #expect(record.finishedAt == nil)
        #expect(record.lastError == nil)
    }

    // MARK: - Discretionary

    @Test("a transfer created by a process that carries a task of the app is discretionary; others are not")
    func discretionaryRule() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        #expect(state.launchDue(at: t0, firstPID: 4242).count == 1)

        let fromTask = state.createTransfer(download("bg"), at: at(1), issuerPID: 4242)
        #expect(fromTask.outcome.message == "download bg of http://127.0.0.1:8080/bg created, discretionary")
        #expect(state.transfer("bg")?.isDiscretionary == true)

        state.createTransfer(download("other-pid"), at: at(1), issuerPID: 4243)
        state.createTransfer(download("no-pid"), at: at(1), issuerPID: nil)
        state.createTransfer(download("other-app", app: Apps.mail), at: at(1), issuerPID: 4242)
        #expect(state.transfer("other-pid")?.isDiscretionary == false)
        #expect(state.transfer("no-pid")?.isDiscretionary == false)
        #expect(state.transfer("other-app", app: Apps.mail)?.isDiscretionary == false,
                "pid 4242 carries a task of news, not of mail")

        state.createTransfer(download("asked", discretionary: true), at: at(1), issuerPID: nil)
        #expect(state.transfer("asked")?.isDiscretionary == true, "an app may ask for discretionary itself")

        // Once the task has completed, the same pid no longer makes transfers discretionary.
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(2))
        state.createTransfer(download("after"), at: at(3), issuerPID: 4242)
        #expect(state.transfer("after")?.isDiscretionary == false)
    }

    @Test("a discretionary transfer waits for external power; a simulated power-on lets it start")
    func discretionaryWaitsForPower() {
        var state = makeState(probed: Conditions(externalPower: false))
        state.createTransfer(download("bg", discretionary: true), at: t0)
        state.createTransfer(download("fg"), at: t0)
        #expect(state.blockers(of: "bg", at: t0) == [.externalPower])
        #expect(state.blockers(of: "fg", at: t0) == [])
        #expect(state.startDue(at: t0) == [transferKey("fg")])
        #expect(state.startDue(at: at(600)).isEmpty)
        #expect(state.transfer("bg")?.state == .waiting)
        #expect(state.nextWake(after: t0) == t0.addingTimeInterval(TransferRecord.defaultTimeoutIntervalForResource),
                "waiting on power is not a wait for a time: only the resource deadline is a wake-up")

        state.run(.setConditions(ConditionOverrides(externalPower: true)), at: at(700))
        #expect(state.blockers(of: "bg", at: at(700)) == [])
        #expect(state.startDue(at: at(700)) == [transferKey("bg")])
    }

    @Test("no network holds every transfer; blockers come in a fixed order")
    func networkAndBlockerOrder() {
        var state = makeState(probed: Conditions(externalPower: false, network: false))
        state.createTransfer(download("bg", earliest: at(60), discretionary: true), at: t0)
        state.createTransfer(download("fg"), at: t0)
        #expect(state.blockers(of: "bg", at: t0) == [.earliestBeginDate, .network, .externalPower])
        #expect(state.blockers(of: "fg", at: t0) == [.network])
        #expect(state.startDue(at: t0).isEmpty)
        state.run(.setConditions(ConditionOverrides(network: true)), at: at(1))
        #expect(state.startDue(at: at(1)) == [transferKey("fg")])
    }

    // MARK: - When transfers start

    @Test("earliestBeginDate is a floor: not started a millisecond before, started at it; the next wake is then")
    func earliestBeginDateIsAFloor() throws {
        var state = makeState()
        state.createTransfer(download("later", earliest: at(60)), at: t0)
        #expect(state.nextWake(after: t0) == at(60))
        #expect(state.blockers(of: "later", at: at(59.999)) == [.earliestBeginDate])
        #expect(state.dueTransfers(at: at(59.999)).isEmpty)
        #expect(state.transfer("later")?.state == .waiting)
        _ = state.takeChanges()

        let actions = state.dueTransfers(at: at(60))
        let record = try #require(state.transfer("later"))
        #expect(record.state == .running)
        #expect(record.updatedAt == at(60))
        #expect(actions == [.start(record)])
        let changes = state.takeChanges()
        #expect(changes.transfers == [transferKey("later")])
        #expect(changes.eventTypes.isEmpty, "started is said when the attempt's request goes out")
        state.transferRequested(transferKey("later"), rangeStart: nil, now: at(60.1))
        let started = state.takeChanges()
        #expect(started.eventTypes == [.transferStarted])
        #expect(started.events.first?.message == "com.example.news: transfer later started (attempt 1)")
    }

    @Test("the concurrency limit counts running transfers, not paused or finished ones")
    func concurrencyLimit() {
        var settings = SchedulerSettings()
        settings.maximumConcurrentTransfers = 2
        var state = makeState(settings: settings)
        for (offset, name) in ["a", "b", "c", "d", "e"].enumerated() {
            state.createTransfer(download(name), at: at(Double(offset)))
        }
        #expect(state.startDue(at: at(10)) == [transferKey("a"), transferKey("b")])
        #expect(state.startDue(at: at(11)).isEmpty, "two are running")

        state.run(.transferPause(app: Apps.news, identifier: ident("a")), at: at(12))
        #expect(state.startDue(at: at(12)) == [transferKey("c")], "a paused transfer frees its place")

        state.transferEnded(transferKey("b"), .completed(statusCode: 200), bytesTransferred: 10, bytesExpected: 10, now: at(13))
        #expect(state.startDue(at: at(13)) == [transferKey("d")], "a completed transfer frees its place")

        state.run(.transferResume(app: Apps.news, identifier: ident("a")), at: at(14))
        #expect(state.startDue(at: at(14)).isEmpty, "c and d run; a and e wait")
        #expect(state.transfers.values.filter { $0.state == .running }.count == 2)
        #expect(state.blockers(of: "e", at: at(14)) == [], "the limit is not a blocker")

        state.transferEnded(transferKey("c"), .failed(message: "connection lost", transient: true),
                            bytesTransferred: 0, bytesExpected: nil, now: at(15))
        #expect(state.startDue(at: at(15)) == [transferKey("a")], "unknown sizes alike: the oldest first")
    }

    @Test("waiting transfers start smallest expected size first, then oldest; unknown sizes last")
    func ordering() {
        var state = makeState()
        state.createTransfer(download("unknown"), at: at(0))
        state.createTransfer(download("big", expects: 5_000_000), at: at(1))
        state.createTransfer(download("small-old", expects: 2_000), at: at(2))
        state.createTransfer(download("small-new", expects: 2_000), at: at(3))
        state.createTransfer(upload("upload", expects: 1_500), at: at(4))
        state.createTransfer(download("tiny-late", earliest: at(20), expects: 10), at: at(5))
        #expect(state.startDue(at: at(10)) == ["upload", "small-old", "small-new", "big"].map { transferKey($0) },
                "within the limit of 4; tiny-late waits for its date")
        var settings = SchedulerSettings()
        settings.maximumConcurrentTransfers = 10
        var wide = makeState(settings: settings)
        wide.createTransfer(download("unknown"), at: at(0))
        wide.createTransfer(download("big", expects: 5_000_000), at: at(1))
        wide.createTransfer(download("small", expects: 2_000), at: at(2))
        #expect(wide.startDue(at: at(10)) == ["small", "big", "unknown"].map { transferKey($0) })
    }

    // MARK: - Attempts ending

    @Test("a permanent failure ends the transfer: failed, finishedAt, transferFailed; it never starts again")
    func permanentFailure() throws {
        var state = makeState()
        state.createTransfer(download("gone"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("gone")])
        _ = state.takeChanges()
        state.transferEnded(transferKey("gone"), .failed(message: "the server answered HTTP 404", transient: false),
                            bytesTransferred: 0, bytesExpected: nil, now: at(5))
        let record = try #require(state.transfer("gone"))
        #expect(record.state == .failed)
        #expect(record.finishedAt == at(5))
        #expect(record.lastError == "the server answered HTTP 404")
        #expect(record.retries == 0)
        #expect(record.retryAt == nil)
        let changes = state.takeChanges()
        #expect(changes.transfers == [transferKey("gone")])
        #expect(changes.eventTypes == [.transferFailed])
        #expect(changes.events.first?.message == "com.example.news: transfer gone failed: the server answered HTTP 404")
        #expect(state.dueTransfers(at: at(3600)).isEmpty)
    }

    @Test("a completed attempt ends the transfer: completed, finishedAt, transferCompleted with the status")
    func completion() throws {
        var state = makeState()
        state.createTransfer(download("ok", expects: 10), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("ok")])
        state.transferProgressed(transferKey("ok"), bytesTransferred: 500, bytesExpected: 2048, bytesPerSecond: 1000,
                                 etag: nil, lastModified: nil, now: at(1))
        _ = state.takeChanges()
        state.transferEnded(transferKey("ok"), .completed(statusCode: 206), bytesTransferred: 2048, bytesExpected: 2048, now: at(2))
        let record = try #require(state.transfer("ok"))
        #expect(record.state == .completed)
        #expect(record.finishedAt == at(2))
        #expect(record.bytesTransferred == 2048)
        #expect(record.bytesExpected == 2048)
        #expect(record.bytesPerSecond == nil)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.transferCompleted])
        #expect(changes.events.first?.reason == "206")
        #expect(changes.events.first?.message == "com.example.news: transfer ok completed (2048 bytes, HTTP 206)")
    }

    @Test("at the resource deadline an active transfer fails for good and is cancelled (stopping an attempt, removing partial data)")
    func resourceDeadline() throws {
        var state = makeState()
        state.createTransfer(download("running", resourceTimeout: 60), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("running")])
        state.createTransfer(download("paused", resourceTimeout: 60), at: t0)
        state.run(.transferPause(app: Apps.news, identifier: ident("paused")), at: t0)
        state.createTransfer(download("waiting", earliest: at(100), resourceTimeout: 60), at: t0)
        state.createTransfer(download("fresh", resourceTimeout: 60), at: at(30))
        #expect(state.nextWake(after: at(30)) == at(60))
        _ = state.takeChanges()

        let actions = state.dueTransfers(at: at(60))
        let fresh = try #require(state.transfer("fresh"))
        #expect(actions == [.cancel(transferKey("paused")), .cancel(transferKey("running")), .cancel(transferKey("waiting")), .start(fresh)])
        for name in ["paused", "running", "waiting"] {
            let record = try #require(state.transfer(name))
            #expect(record.state == .failed, "\(name)")
            #expect(record.finishedAt == at(60), "\(name)")
            #expect(record.lastError == "gave up after its resource timeout of 60 s", "\(name)")
        }
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.transferFailed, .transferFailed, .transferFailed])
        #expect(state.nextWake(after: at(60)) == at(90), "the fresh one's deadline; finished ones are forgotten later")
    }

    @Test("the default resource timeout is 7 days from createdAt")
    func defaultResourceDeadline() {
        var state = makeState()
        state.createTransfer(download("slow"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("slow")])
        #expect(state.dueTransfers(at: at(7 * day - 0.001)).isEmpty)
        #expect(state.dueTransfers(at: at(7 * day)) == [.cancel(transferKey("slow"))])
        #expect(state.transfer("slow")?.lastError == "gave up after its resource timeout of 604800 s")
    }

    // MARK: - Pause, resume, cancel

    @Test("pausing a running transfer stops its attempt; pausing a waiting one needs no action")
    func pause() throws {
        var state = makeState()
        state.createTransfer(download("run"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("run")])
        state.transferProgressed(transferKey("run"), bytesTransferred: 300, bytesExpected: 1000, bytesPerSecond: 100,
                                 etag: nil, lastModified: nil, now: at(3))
        state.createTransfer(download("wait", earliest: at(100)), at: at(3))
        _ = state.takeChanges()

        let paused = state.run(.transferPause(app: Apps.news, identifier: ident("run")), at: at(4), id: "pause-1")
        #expect(paused.outcome.message == "paused run")
        #expect(paused.outcome.identifier == ident("run"))
        let record = try #require(state.transfer("run"))
        #expect(record.state == .paused)
        #expect(record.bytesPerSecond == nil)
        #expect(record.bytesTransferred == 300)
        #expect(paused.transferActions == [.pause(transferKey("run"))])
        #expect(state.takeChanges().eventTypes.isEmpty, "a running attempt's pause is said once it has stopped")

        let pausedWaiting = state.run(.transferPause(app: Apps.news, identifier: ident("wait")), at: at(5))
        #expect(state.transfer("wait")?.state == .paused)
        #expect(pausedWaiting.transferActions.isEmpty)
        #expect(state.takeChanges().events.map(\.message) == ["com.example.news: transfer wait paused at 0 bytes"],
                "no attempt runs: said at once")

        let again = state.run(.transferPause(app: Apps.news, identifier: ident("run")), at: at(6))
        #expect(again.outcome.message == "run was already paused")
        #expect(again.transferActions.isEmpty)

        // The engine's report of the stopped attempt keeps it paused, with the bytes on disk.
        _ = state.takeChanges()
        state.transferEnded(transferKey("run"), .paused, bytesTransferred: 320, bytesExpected: 1000, now: at(7))
        #expect(state.transfer("run")?.state == .paused)
        #expect(state.transfer("run")?.bytesTransferred == 320)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.transferPaused])
        #expect(changes.events.first?.command == "pause-1")
        #expect(changes.events.first?.message == "com.example.news: transfer run paused at 320 bytes")
        #expect(state.dueTransfers(at: at(200)).isEmpty, "paused transfers never start")
    }

    @Test("resuming a paused transfer makes it wait again; it then starts from its partial data")
    func resume() throws {
        var state = makeState()
        state.createTransfer(download("dl"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("dl")])
        state.transferEnded(transferKey("dl"), .failed(message: "connection lost", transient: true),
                            bytesTransferred: 400, bytesExpected: 1000, now: at(1))
        #expect(state.transfer("dl")?.retryAt == at(2))
        state.run(.transferPause(app: Apps.news, identifier: ident("dl")), at: at(1))
        _ = state.takeChanges()

        let resumed = state.run(.transferResume(app: Apps.news, identifier: ident("dl")), at: at(1.5))
        #expect(resumed.outcome.message == "resumed dl")
        let record = try #require(state.transfer("dl"))
        #expect(record.state == .waiting)
        #expect(record.retryAt == nil, "resuming clears the backoff")
        #expect(resumed.effects.isEmpty, "the attempt starts when due, not by the command")
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.transferResumed])
        #expect(changes.events.first?.message == "com.example.news: transfer dl resumed from 400 bytes")

        let notPaused = state.run(.transferResume(app: Apps.news, identifier: ident("dl")), at: at(1.5))
        #expect(notPaused.outcome.message == "dl is not paused (waiting)")
        #expect(state.startDue(at: at(1.5)) == [transferKey("dl")])
    }

    @Test("cancelling stops the attempt and removes partial data (a cancel action), whatever the state")
    func cancel() throws {
        var state = makeState()
        state.createTransfer(download("run"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("run")])
        state.createTransfer(download("wait", earliest: at(100)), at: t0)
        _ = state.takeChanges()

        let cancelled = state.run(.transferCancel(app: Apps.news, identifier: ident("run")), at: at(2), id: "cancel-1")
        #expect(cancelled.outcome.message == "cancelled run")
        let record = try #require(state.transfer("run"))
        #expect(record.state == .cancelled)
        #expect(record.finishedAt == at(2))
        #expect(record.lastError == "cancelled")
        #expect(cancelled.transferActions == [.cancel(transferKey("run"))])
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.transferCancelled])
        #expect(changes.events.first?.reason == "cancelled")
        #expect(changes.events.first?.command == "cancel-1")

        let cancelledWaiting = state.run(.transferCancel(app: Apps.news, identifier: ident("wait")), at: at(3))
        #expect(state.transfer("wait")?.state == .cancelled)
        #expect(cancelledWaiting.transferActions == [.cancel(transferKey("wait"))], "a waiting download may have partial data too")

        // The stopped attempt's report does not bring it back.
        state.transferEnded(transferKey("run"), .cancelled, bytesTransferred: 50, bytesExpected: nil, now: at(4))
        #expect(state.transfer("run")?.state == .cancelled)
        #expect(state.dueTransfers(at: at(200)).isEmpty)
    }

    @Test("pause, resume and cancel of a transfer that is not active are refused with noSuchTask")
    func noSuchTransfer() {
        var state = makeState()
        let actions: [CommandAction] = [
            .transferPause(app: Apps.news, identifier: ident("nope")),
            .transferResume(app: Apps.news, identifier: ident("nope")),
            .transferCancel(app: Apps.news, identifier: ident("nope")),
        ]
        for action in actions {
            let result = state.run(action, at: t0)
            #expect(result.errorName == "noSuchTask")
            #expect(result.errorMessage == "no active transfer with identifier nope for com.example.news")
        }
        state.createTransfer(download("done"), at: t0)
        state.run(.transferCancel(app: Apps.news, identifier: ident("done")), at: at(1))
        _ = state.takeChanges()
        for action in [CommandAction.transferPause(app: Apps.news, identifier: ident("done")),
                       .transferResume(app: Apps.news, identifier: ident("done")),
                       .transferCancel(app: Apps.news, identifier: ident("done"))] {
            let refused = state.run(action, at: at(2))
            #expect(refused.errorName == "noSuchTask")
            #expect(refused.effects.isEmpty)
        }
        #expect(state.takeChanges().eventTypes == [.refused, .refused, .refused])
    }

    @Test("disabling an app cancels its active transfers with reason 'app disabled'")
    func disablingCancels() throws {
        var state = makeState()
        state.createTransfer(download("a-running"), at: t0)
        state.createTransfer(download("b-paused"), at: t0)
        state.createTransfer(download("c-done"), at: t0)
        state.createTransfer(download("mail", app: Apps.mail), at: t0)
        #expect(state.startDue(at: t0).count == 4)
        state.run(.transferPause(app: Apps.news, identifier: ident("b-paused")), at: at(1))
        state.transferEnded(transferKey("c-done"), .completed(statusCode: 200), bytesTransferred: 1, bytesExpected: 1, now: at(1))
        state.createTransfer(download("d-waiting", earliest: at(100)), at: at(1))
        _ = state.takeChanges()

        let result = state.run(.setAppEnabled(app: Apps.news, enabled: false), at: at(2))
        #expect(result.outcome.message == "com.example.news disabled")
        #expect(result.transferActions == ["a-running", "b-paused", "d-waiting"].map { TransferAction.cancel(transferKey($0)) })
        for name in ["a-running", "b-paused", "d-waiting"] {
            let record = try #require(state.transfer(name))
            #expect(record.state == .cancelled, "\(name)")
            #expect(record.lastError == "app disabled", "\(name)")
            #expect(record.finishedAt == at(2), "\(name)")
        }
        #expect(state.transfer("c-done")?.state == .completed)
        #expect(state.transfer("mail", app: Apps.mail)?.state == .running)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.transferCancelled, .transferCancelled, .transferCancelled, .appDisabled])
        #expect(changes.events.prefix(3).allSatisfy { $0.reason == "app disabled" && $0.command == nil })

        #expect(state.run(.setAppEnabled(app: Apps.news, enabled: false), at: at(3)).transferActions.isEmpty)
    }

    // MARK: - Progress, restarts, retention

    @Test("progress is written without a sync, unless the entity's validator changed")
    func progressIsNotDurable() throws {
        var state = makeState()
        let key = transferKey("dl")
        state.createTransfer(download("dl", expects: 100), at: t0)
        #expect(state.startDue(at: t0) == [key])
        _ = state.takeChanges()

        state.transferProgressed(key, bytesTransferred: 0, bytesExpected: 1000, bytesPerSecond: nil,
                                 etag: "\"v1\"", lastModified: "Sun, 22 Nov 2026 09:00:00 GMT", now: at(1))
        var changes = state.takeChanges()
        #expect(changes.transfers == [key], "a new validator is needed to resume: durable")
        #expect(changes.transferProgress.isEmpty)
        #expect(changes.events.isEmpty)

        state.transferProgressed(key, bytesTransferred: 500, bytesExpected: 1000, bytesPerSecond: 250,
                                 etag: "\"v1\"", lastModified: nil, now: at(2))
        changes = state.takeChanges()
        #expect(changes.transfers.isEmpty)
        #expect(changes.transferProgress == [key])
        #expect(changes.events.isEmpty)
        #expect(!changes.needsDurableCommit)
        let record = try #require(state.transfer("dl"))
        #expect(record.bytesTransferred == 500)
        #expect(record.bytesExpected == 1000, "the server's length replaces the app's hint")
        #expect(record.bytesPerSecond == 250)
        #expect(record.etag == "\"v1\"")
        #expect(record.lastModified == "Sun, 22 Nov 2026 09:00:00 GMT", "a missing validator keeps the recorded one")
        #expect(record.updatedAt == at(2))

        state.transferProgressed(key, bytesTransferred: 600, bytesExpected: nil, bytesPerSecond: 250,
                                 etag: "\"v2\"", lastModified: nil, now: at(3))
        changes = state.takeChanges()
        #expect(changes.transfers == [key])
        #expect(state.transfer("dl")?.bytesExpected == 1000, "an unknown length keeps the known one")

        // Progress of a transfer that is not running (a late report after a pause) is ignored.
        state.run(.transferPause(app: Apps.news, identifier: ident("dl")), at: at(4))
        _ = state.takeChanges()
        state.transferProgressed(key, bytesTransferred: 900, bytesExpected: 1000, bytesPerSecond: 1,
                                 etag: nil, lastModified: nil, now: at(5))
        #expect(state.takeChanges().isEmpty)
        #expect(state.transfer("dl")?.bytesTransferred == 600)
    }

    @Test("after a scheduler restart, running transfers wait again and resume from where they were")
    func requeueAfterRestart() throws {
        var state = makeState()
        state.createTransfer(download("run"), at: t0)
        state.createTransfer(download("held"), at: t0)
        #expect(state.startDue(at: t0).count == 2)
        state.transferProgressed(transferKey("run"), bytesTransferred: 700, bytesExpected: 1000, bytesPerSecond: 50,
                                 etag: "\"e\"", lastModified: nil, now: at(1))
        state.run(.transferPause(app: Apps.news, identifier: ident("held")), at: at(1))
        _ = state.takeChanges()

        state.requeueInterruptedTransfers(now: at(10))
        let record = try #require(state.transfer("run"))
        #expect(record.state == .waiting)
        #expect(record.bytesTransferred == 700)
        #expect(record.bytesPerSecond == nil)
        #expect(record.etag == "\"e\"")
        #expect(record.retries == 0)
        #expect(record.updatedAt == at(10))
        #expect(state.transfer("held")?.state == .paused)
        let changes = state.takeChanges()
        #expect(changes.transfers == [transferKey("run")])
        #expect(changes.events.isEmpty)

        #expect(state.startDue(at: at(10)) == [transferKey("run")])
        state.transferRequested(transferKey("run"), rangeStart: 700, now: at(10))
        #expect(state.takeChanges().events.first?.message == "com.example.news: transfer run started from byte 700 (attempt 1)")
    }

    @Test("finished transfers are forgotten after finishedTransferRetentionSeconds, active ones never")
    func retention() {
        var state = makeState()
        state.createTransfer(download("cancelled"), at: t0)
        state.run(.transferCancel(app: Apps.news, identifier: ident("cancelled")), at: t0)
        state.createTransfer(download("completed"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("completed")])
        state.transferEnded(transferKey("completed"), .completed(statusCode: 200), bytesTransferred: 1, bytesExpected: 1, now: at(100))
        state.createTransfer(download("waiting", earliest: at(10 * hour)), at: t0)
        _ = state.takeChanges()

        #expect(state.nextWake(after: at(200)) == at(3600), "the first forgetting is a wake-up")
        state.forgetFinishedTransfers(at: at(3599.999))
        #expect(state.transfers.count == 3)
        #expect(state.takeChanges().isEmpty)

        state.forgetFinishedTransfers(at: at(3600))
        #expect(state.transfer("cancelled") == nil)
        #expect(state.transfer("completed") != nil)
        #expect(state.takeChanges().transfers == [transferKey("cancelled")], "the file is removed")

        state.forgetFinishedTransfers(at: at(3700))
        #expect(state.transfer("completed") == nil)
        state.forgetFinishedTransfers(at: at(9 * hour))
        #expect(state.transfer("waiting")?.state == .waiting)
    }

    @Test("the retention follows the setting")
    func retentionSetting() {
        var settings = SchedulerSettings()
        settings.finishedTransferRetentionSeconds = 60
        var state = makeState(settings: settings)
        state.createTransfer(download("dl"), at: t0)
        state.run(.transferCancel(app: Apps.news, identifier: ident("dl")), at: at(5))
        #expect(state.nextWake(after: at(5)) == at(65))
        state.forgetFinishedTransfers(at: at(64.999))
        #expect(state.transfer("dl") != nil)
        state.forgetFinishedTransfers(at: at(65))
        #expect(state.transfer("dl") == nil)
    }

    // MARK: - Helpers

    private func expectRefused(_ state: inout SchedulerState, _ request: TransferRequest, _ name: String, _ message: String,
                               at now: Date = t0, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = state.transfers
        _ = state.takeChanges()
        let result = state.createTransfer(request, at: now)
        #expect(result.errorName == name, sourceLocation: sourceLocation)
        #expect(result.errorMessage == message, sourceLocation: sourceLocation)
        #expect(state.transfers == before, "a refusal changes no transfer", sourceLocation: sourceLocation)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.refused], sourceLocation: sourceLocation)
        #expect(changes.events.first?.reason == name, sourceLocation: sourceLocation)
        #expect(changes.transfers.isEmpty, sourceLocation: sourceLocation)
    }
}

@Suite("TransferPolicy: attempts that have not ended yet")
struct TransferAttemptOverlapTests {
    @Test("a transfer paused and resumed at once waits for its old attempt's end before starting again")
    func resumeWaitsForTheOldAttempt() throws {
        var state = makeState()
        state.createTransfer(download("quick"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("quick")])
        state.run(.transferPause(app: Apps.news, identifier: ident("quick")), at: t0)
        state.run(.transferResume(app: Apps.news, identifier: ident("quick")), at: t0)
        #expect(state.dueTransfers(at: t0, busy: [transferKey("quick")]).isEmpty, "the old attempt still runs")
        state.transferEnded(transferKey("quick"), .paused, bytesTransferred: 10, bytesExpected: 100, now: t0)
        #expect(state.transfer("quick")?.state == .waiting, "the late end of the old attempt leaves it waiting")
        #expect(state.dueTransfers(at: t0, busy: []).count == 1)
    }

    @Test("a transfer held only by a probed condition makes the scheduler look at the machine again; a simulated one does not")
    func waitingOnPowerAsksForAProbe() {
        var state = makeState(probed: Conditions(externalPower: false))
        state.createTransfer(download("frugal", discretionary: true), at: t0)
        #expect(state.isWaitingOnConditions(at: t0))
        state.run(.setConditions(ConditionOverrides(externalPower: false)), at: t0)
        #expect(!state.isWaitingOnConditions(at: t0), "a person said battery: no probe changes that")
    }

    @Test("a completion that lands just after a pause completes the transfer")
    func completionAfterPause() {
        var state = makeState()
        state.createTransfer(download("late"), at: t0)
        _ = state.startDue(at: t0)
        state.run(.transferPause(app: Apps.news, identifier: ident("late")), at: t0)
        state.transferEnded(transferKey("late"), .completed(statusCode: 200), bytesTransferred: 100, bytesExpected: 100, now: t0)
        #expect(state.transfer("late")?.state == .completed)
    }
}

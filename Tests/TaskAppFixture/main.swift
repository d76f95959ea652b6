// A test app for the BackgroundTasks tests: each mode is one behaviour under test. It records
// what happens to it as JSON lines in the file named by TASKAPP_RECORD, so a test can read when
// a handler started, when an expiration arrived and in which process.
import BackgroundTasks
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// Options come as `--record=PATH`, `--ids=a,b`, `--push` (registers a push handler in any mode)
// and `--request-timeout=SECONDS` (the background session's timeoutIntervalForRequest, in the
// `session` and `await` modes), so a manifest's arguments can carry them; the rest is the mode and
// its own arguments.
let options = CommandLine.arguments.dropFirst().filter { $0.hasPrefix("--") }
let arguments = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("--") }
func option(_ name: String) -> String? {
    options.first { $0.hasPrefix("--\(name)=") }.map { String($0.dropFirst(name.count + 3)) }
}
let mode = arguments.first ?? "return"
let scheduler = BGTaskScheduler.shared
let recordPath = option("record")
let recordLock = Mutex<Void>(())

/// Appends one line to the record file, with why the scheduler launched this process, if it did.
func record(_ event: String, _ identifier: String = "", _ detail: String = "") {
    var fields: [String: Any] = ["event": event, "identifier": identifier, "pid": Int(getpid()),
                                 "time": Date().timeIntervalSince1970, "detail": detail]
    fields["launchReason"] = ProcessInfo.processInfo.environment["BGTASK_LAUNCH_REASON"]
    // Serialised, so a detail may hold any text (a push's payload).
    guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
    let line = String(decoding: data, as: UTF8.self) + "\n"
    recordLock.withLock { _ in
        guard let recordPath else { return }
        let fd = open(recordPath, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        guard fd >= 0 else { return }
        _ = line.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }
}

let identifiers = (option("ids") ?? "com.example.testapp.refresh").split(separator: ",").map(String.init)

/// The configuration of the background session `identifier`, with `--request-timeout` applied: a
/// test whose server holds a response longer than the default 60 s without progress sets it, so
/// the attempt is not cut and retried meanwhile.
func sessionConfiguration(_ identifier: String) -> BGURLSessionConfiguration {
    var configuration = BGURLSessionConfiguration.background(withIdentifier: identifier)
    if let seconds = option("request-timeout").flatMap(TimeInterval.init) { configuration.timeoutIntervalForRequest = seconds }
    return configuration
}

/// Burns CPU without ever yielding until `flag` is raised.
func spin(until flag: borrowing Atomic<Bool>) {
    var x: UInt64 = 1
    while !flag.load(ordering: .relaxed) { x = x &* 6364136223846793005 &+ 1442695040888963407 }
    if x == 42 { print("") }
}

/// The push handler of `--push`: records the `userInfo` it gets, then answers what the payload's
/// `"answer"` says (`newData` when absent). `"behaviour": "sleep"` makes it sleep past its budget
/// and, once cancelled, answer `newData` anyway.
func handlePush(_ userInfo: [AnyHashable: Any]) async -> BGApplication.BackgroundFetchResult {
    var object: [String: Any] = [:]
    for (key, value) in userInfo { object["\(key)"] = value }
    let text = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    record("push-received", "", text)
    if userInfo["behaviour"] as? String == "sleep" {
        await withTaskCancellationHandler {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        } onCancel: {
            record("push-cancelled")
        }
        record("push-returned", "", "newData")
        return .newData
    }
    let answer: BGApplication.BackgroundFetchResult
    switch userInfo["answer"] as? String {
    case "noData": answer = .noData
    case "failed": answer = .failed
    default: answer = .newData
    }
    record("push-returned", "", "\(answer)")
    return answer
}

if options.contains("--push") {
    BGApplication.shared.registerForRemoteNotifications(didReceiveRemoteNotification: handlePush)
}

switch mode {
case "push-register":
    // Prints what registerForRemoteNotifications returns: first, a second time, after launching.
    print("push: \(BGApplication.shared.registerForRemoteNotifications { _ in .newData })")
    print("again: \(BGApplication.shared.registerForRemoteNotifications { _ in .noData })")
    scheduler.finishLaunching()
    print("late: \(BGApplication.shared.registerForRemoteNotifications { _ in .newData })")
    exit(0)
case "spin":
    // Callback handler that keeps its thread busy; the expiration must still arrive.
    for id in identifiers {
        scheduler.register(forTaskWithIdentifier: id, using: nil) { task in
            record("started", task.identifier)
            let expired = Atomic<Bool>(false)
            task.expirationHandler = {
                record("expired", task.identifier)
                expired.store(true, ordering: .relaxed)
            }
            spin(until: expired)
            task.setTaskCompleted(success: false)
        }
    }
case "async-spin":
    // Async handler stuck in CPU work that checks for cancellation only now and then.
    for id in identifiers {
        scheduler.register(.appRefresh(id)) {
            record("started", id)
            await withTaskCancellationHandler {
                while !Task.isCancelled { for _ in 0..<1000 { _ = UUID() } }
                record("saw-cancel", id)
            } onCancel: {
                record("cancelled", id)
            }
        }
    }
case "async-sleep":
    for id in identifiers {
        scheduler.register(.appRefresh(id)) {
            record("started", id)
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                record("cancelled", id, "\(type(of: error))")
            }
        }
    }
case "return":
    for id in identifiers {
        scheduler.register(.appRefresh(id)) { record("started", id); record("returned", id) }
    }
case "resubmit":
    for id in identifiers {
        scheduler.register(.appRefresh(id)) {
            record("started", id)
            let request = BGAppRefreshTaskRequest(identifier: id)
            request.earliestBeginDate = Date().addingTimeInterval(3600)
            do {
                try scheduler.submit(request)
                record("resubmitted", id)
            } catch {
                record("resubmit-failed", id, "\(error)")
            }
        }
    }
case "never":
    // Ignores its expiration and never completes: it must be killed and throttled.
    for id in identifiers {
        scheduler.register(forTaskWithIdentifier: id, using: nil) { task in
            record("started", task.identifier)
            task.expirationHandler = { record("expired", task.identifier) }
        }
    }
case "register-twice":
    scheduler.register(.appRefresh(identifiers[0])) {}
    scheduler.register(.appRefresh(identifiers[0])) {}
    print("registered twice without stopping")
    exit(0)
case "register":
    // Prints what register returns: for an unpermitted identifier, and after launching finished.
    print("first: \(scheduler.register(.appRefresh(identifiers[0])) {})")
    scheduler.finishLaunching()
    print("late: \(scheduler.register(.appRefresh(identifiers.count > 1 ? identifiers[1] : "late.id")) {})")
    exit(0)
case "submit":
    // submit ID KIND [seconds-from-now]; prints the outcome in one line.
    let id = arguments.count > 1 ? arguments[arguments.startIndex + 1] : identifiers[0]
    let kind = arguments.count > 2 ? arguments[arguments.startIndex + 2] : "appRefresh"
    let request: BGTaskRequest = kind == "processing" ? BGProcessingTaskRequest(identifier: id) : BGAppRefreshTaskRequest(identifier: id)
    if arguments.count > 3, let seconds = Double(arguments[arguments.startIndex + 3]) { request.earliestBeginDate = Date().addingTimeInterval(seconds) }
    do {
        try scheduler.submit(request)
        print("submitted \(id)")
        let pending = await scheduler.pendingTaskRequests()
        print("pending: \(pending.map(\.identifier).sorted().joined(separator: " "))")
    } catch {
        // Both ways of catching: by code, as with Apple's framework, and by type.
        var how = ""
        if case BGTaskScheduler.Error.tooManyPendingTaskRequests = error { how = " [caught by code]" }
        if let error = error as? BGTaskScheduler.Error {
            print("error \(error.code.name): \(error.message)\(how)")
        } else {
            print("error: \(error)")
        }
        exit(3)
    }
    exit(0)
case "cancel":
    scheduler.cancel(taskRequestWithIdentifier: arguments.count > 1 ? arguments[arguments.startIndex + 1] : identifiers[0])
    print("pending: \(await scheduler.pendingTaskRequests().map(\.identifier).sorted().joined(separator: " "))")
    exit(0)
case "finishing":
    // Begins a finishing task and ends it from its expiration handler.
    let ended = DispatchSemaphore(value: 0)
    let box = Mutex<BGApplication.BackgroundTaskIdentifier>(.invalid)
    let id = BGApplication.shared.beginBackgroundTask(withName: "send message") {
        record("expired", "finishing")
        BGApplication.shared.endBackgroundTask(box.withLock { $0 })
        ended.signal()
    }
    box.withLock { $0 = id }
    record("began", "finishing", "\(id.rawValue)")
    if id == .invalid { exit(4) }
    ended.wait()
    // endBackgroundTask made the completion durable: the process may go at once.
    exit(0)
case "expiring-activity":
    // performExpiringActivity: the first call waits for the expired one, then returns. Each
    // records the thread it ran on.
    let heard = DispatchSemaphore(value: 0)
    let returned = DispatchSemaphore(value: 0)
    BGProcessInfo.shared.performExpiringActivity(withReason: "flush cache") { expired in
        record("activity", "", "expired=\(expired) thread=\(pthread_self())")
        if expired {
            heard.signal()
            return
        }
        heard.wait()
        record("activity-returned")
        returned.signal()
    }
    // Without a scheduler the only call is the expired one: nothing returns from the first.
    if CommandLine.arguments.contains("--no-time") {
        heard.wait()
        exit(0)
    }
    returned.wait()
    // The library ends the finishing task once the first call has returned: stay until the
    // scheduler has taken it off the app's tasks, so the test sees the ending and not this exit.
    let environment = ProcessInfo.processInfo.environment
    let tasks = "\(environment["BGTASK_STATE_DIR"] ?? "")/tasks/\(environment["BGTASK_APP_ID"] ?? "")"
    for _ in 0..<1000 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        if !names.contains(where: { $0.hasPrefix("finishing-") }) { break }
        usleep(10_000)
    }
    record("activity-ended")
    exit(0)
default:
    break
}

if mode == "await" {
    await runAwaitMode(Array(arguments.dropFirst()), identifiers: identifiers, inHandler: options.contains("--in-handler"),
                       promote: option("promote"), method: option("method"))
}

if mode == "session" {
    // A background session: `session [download URL | upload URL FILE]` hands a transfer over
    // (starting a second and a half from now, so it ends after this process is gone); with no
    // transfer it only serves, as when the scheduler launches it for the session's events.
    // `--sha256=HEX` makes the download one that must have that digest. `--bearer=TOKEN`,
    // `--method=M` or `--api-key=K` (a secret named in the configuration) make it a URLRequest.
    final class Recorder: BGURLSessionDelegate {
        func urlSession(_ session: BGURLSession, downloadTask: BGURLSessionTask, didFinishDownloadingTo location: URL) {
            let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int) ?? -1
            record("downloaded", downloadTask.taskIdentifier, "\(location.path) \(size)")
        }
        func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didCompleteWithError error: (any Error)?) {
            record("session-complete", task.taskIdentifier, error.map { "\($0)" } ?? "ok")
        }
        func urlSessionDidFinishEvents(forBackgroundURLSession session: BGURLSession) {
            record("events-finished", session.configuration.identifier)
        }
    }
    let sessionID = "com.example.testapp.session"
    var configuration = sessionConfiguration(sessionID)
    configuration.secretHTTPHeaderNames = ["X-Api-Key"]
    let session = BGURLSession(configuration: configuration, delegate: Recorder())
    scheduler.register(.urlSession(sessionID)) {
        record("session-handler", sessionID, ProcessInfo.processInfo.environment["BGTASK_LAUNCH_REASON"] ?? "")
        await session.deliverPendingEvents()
    }
    let rest = Array(arguments.dropFirst())
    let asRequest = option("bearer") != nil || option("method") != nil || option("api-key") != nil
    if rest.count >= 2, let url = URL(string: rest[1]), asRequest {
        var request = URLRequest(url: url)
        if let method = option("method") { request.httpMethod = method }
        if let token = option("bearer") { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let key = option("api-key") { request.setValue(key, forHTTPHeaderField: "X-Api-Key") }
        request.setValue("fixture", forHTTPHeaderField: "X-Trace")
        let task = rest[0] == "upload" && rest.count >= 3
            ? session.uploadTask(with: request, fromFile: URL(fileURLWithPath: rest[2]))
            : session.downloadTask(with: request)
        task.earliestBeginDate = Date().addingTimeInterval(1.5)
        task.resume()
        record("handed-over", task.taskIdentifier)
        // A refusal is told on the session's thread; this tells it now, before the process exits.
        await session.deliverPendingEvents()
    } else if rest.count >= 2, let url = URL(string: rest[1]) {
        let task = rest[0] == "upload" && rest.count >= 3
            ? session.uploadTask(with: url, fromFile: URL(fileURLWithPath: rest[2]))
            : option("sha256").map { session.downloadTask(with: url, expectedSHA256: $0) } ?? session.downloadTask(with: url)
        task.earliestBeginDate = Date().addingTimeInterval(1.5)
        task.resume()
        record("handed-over", task.taskIdentifier)
    }
}

if mode == "voip" {
    // `voip report|silent`: registers for VoIP pushes (PushRegistry). `report` reports the call
    // the payload names ("uuid", "handle"; a fresh UUID and "alice" when absent), records how it
    // was shown, reports it a second time (which must be refused), then completes. `silent`
    // never reports nor completes: the scheduler must kill it. With `--stay` it stays running.
    final class CallAnswerer: PushRegistryDelegate {
        let reports: Bool
        let provider = CallProvider(configuration: .init(localizedName: "Fixture Phone"))
        init(reports: Bool) { self.reports = reports }

        func pushRegistry(_ registry: PushRegistry, didReceiveIncomingPushWith payload: PushRegistry.Payload,
                          for type: PushRegistry.PushType, completion: @escaping @Sendable () -> Void) {
            let object = payload.dictionaryPayload
            record("voip-received", "", "\(object["handle"] as? String ?? "")")
            guard reports else { return }
            let uuid = (object["uuid"] as? String).flatMap(UUID.init(uuidString:)) ?? UUID()
            let handle = object["handle"] as? String ?? "alice"
            do {
                let notifier = try provider.reportNewIncomingCall(uuid: uuid, handle: handle)
                record("call-reported", uuid.uuidString, notifier)
            } catch {
                record("call-report-failed", uuid.uuidString, "\(error.code): \(error.message)")
            }
            do {
                try provider.reportNewIncomingCall(uuid: uuid, handle: handle)
                record("second-report-accepted", uuid.uuidString)
            } catch {
                record("second-report-refused", uuid.uuidString, "\(error.code): \(error.message)")
            }
            completion()
        }
    }
    let answerer = CallAnswerer(reports: arguments.dropFirst().first != "silent")
    let registry = PushRegistry(queue: nil)
    registry.delegate = answerer
    registry.desiredPushTypes = [.voIP]
    if options.contains("--stay") {
        // Started by a person: it attaches and takes VoIP pushes as they come, until killed.
        scheduler.finishLaunching()
        record("ready")
        while true { pause() }
    }
    await scheduler.runUntilComplete()
    record("exiting")
    withExtendedLifetime((answerer, registry)) {}
    exit(0)
}

if mode == "ask" {
    await runAskMode(Array(arguments.dropFirst()), answer: option("answer") ?? "continue", stay: options.contains("--stay"))
}

if mode == "serve" {
    // An app with a life of its own: it attaches and takes tasks as they come due, until killed.
    for id in identifiers {
        scheduler.register(.appRefresh(id)) { record("started", id) }
    }
    scheduler.finishLaunching()
    record("ready")
    while true { pause() }
}

await scheduler.runUntilComplete()
record("exiting")

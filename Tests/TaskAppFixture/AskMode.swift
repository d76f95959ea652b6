import BackgroundTasks
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of `ask` mode: records each question (the URL and the Authorization it was
/// asked about) and answers as `--answer=` says: `continue`, `cancel`, `new:URL` (with a new
/// bearer token) or `never` (it sleeps past any answer time).
final class Asker: BGURLSessionDelayedRequestDelegate {
    let answer: String
    init(answer: String) { self.answer = answer }

    func urlSession(_ session: BGURLSession, task: BGURLSessionTask,
                    willBeginDelayedRequest request: URLRequest) async -> BGURLSession.DelayedRequestDisposition {
        record("asked", task.taskIdentifier,
               "\(request.url?.absoluteString ?? "-") \(request.value(forHTTPHeaderField: "Authorization") ?? "-")")
        switch answer {
        case "continue":
            return .continueLoading
        case "cancel":
            return .cancel
        case "never":
            try? await Task.sleep(for: .seconds(3600))
            return .continueLoading
        default:
            var changed = URLRequest(url: URL(string: String(answer.dropFirst("new:".count))) ?? URL(fileURLWithPath: "/"))
            changed.setValue("Bearer new-t0ken", forHTTPHeaderField: "Authorization")
            return .useNewRequest(changed)
        }
    }

    func urlSession(_ session: BGURLSession, downloadTask: BGURLSessionTask, didFinishDownloadingTo location: URL) {
        let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int) ?? -1
        record("downloaded", downloadTask.taskIdentifier, "\(size)")
    }

    func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didCompleteWithError error: (any Error)?) {
        record("session-complete", task.taskIdentifier, error.map { "\($0)" } ?? "ok")
    }
}

/// `ask [download URL] --answer=… [--stay]`: a session whose delegate is asked before a delayed
/// transfer begins. With `download URL` it makes a download with `Authorization: Bearer
/// old-t0ken` beginning 1.5 s from now. With `--stay` it attaches and stays until killed (the
/// running process is asked); otherwise it runs what the scheduler handed it and exits (a
/// stopped app is launched to be asked).
func runAskMode(_ rest: [String], answer: String, stay: Bool) async -> Never {
    let sessionID = "com.example.testapp.asking"
    let session = BGURLSession(configuration: .background(withIdentifier: sessionID), delegate: Asker(answer: answer))
    let scheduler = BGTaskScheduler.shared
    scheduler.register(.urlSession(sessionID)) {
        record("session-handler", sessionID, ProcessInfo.processInfo.environment["BGTASK_LAUNCH_REASON"] ?? "")
        await session.deliverPendingEvents()
    }
    if rest.count >= 2, rest[0] == "download", let url = URL(string: rest[1]) {
        var request = URLRequest(url: url)
        request.setValue("Bearer old-t0ken", forHTTPHeaderField: "Authorization")
        let task = session.downloadTask(with: request)
        task.earliestBeginDate = Date().addingTimeInterval(1.5)
        task.resume()
        record("handed-over", task.taskIdentifier)
    }
    if stay {
        scheduler.finishLaunching()
        record("ready")
        while true { pause() }
    }
    await scheduler.runUntilComplete()
    record("exiting")
    withExtendedLifetime(session) {}
    exit(0)
}

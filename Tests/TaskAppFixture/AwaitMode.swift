// The fixture's `await` mode: async transfers of a background session (`download(for:)`,
// `upload(for:fromFile:)`), awaited by hand or from an app refresh handler whose cancellation
// handler may promote the download, as Stormy does.
import BackgroundTasks
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session of the `await` mode, the same identifier as the `session` mode's.
let awaitSessionID = "com.example.testapp.session"

/// Records what the delegate hears: only transfers no async call awaits should reach it.
final class AwaitDelegate: BGURLSessionDelegate {
    func urlSession(_ session: BGURLSession, downloadTask: BGURLSessionTask, didFinishDownloadingTo location: URL) {
        let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int) ?? -1
        record("downloaded", downloadTask.taskIdentifier, "\(location.path) \(size)")
    }
    func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didCompleteWithError error: (any Error)?) {
        record("session-complete", task.taskIdentifier, error.map { "\($0)" } ?? "ok")
    }
}

/// `await download URL | upload URL FILE | tasks` with options:
/// - `--in-handler`: await from the app refresh handler (`identifiers`), not at once;
/// - `--promote=same|header`: the handler's `onCancel` makes and resumes `downloadTask(with:)` of
///   the same request, or of one whose `X-Trace` differs;
/// - `--method=M`: the request's method;
/// - `--request-timeout=SECONDS`: the session's timeoutIntervalForRequest (``sessionConfiguration(_:)``).
/// `tasks` hands over a plain download of URL and records the session's `allTasks()`.
func runAwaitMode(_ rest: [String], identifiers: [String], inHandler: Bool, promote: String?, method: String?) async -> Never {
    let session = BGURLSession(configuration: sessionConfiguration(awaitSessionID), delegate: AwaitDelegate())
    BGTaskScheduler.shared.register(.urlSession(awaitSessionID)) {
        record("session-handler", awaitSessionID, ProcessInfo.processInfo.environment["BGTASK_LAUNCH_REASON"] ?? "")
        await session.deliverPendingEvents()
    }
    let verb = rest.first ?? ""
    guard rest.count >= 2, let url = URL(string: rest[1]) else {
        // Launched for the session: hear of its transfers, then go.
        await BGTaskScheduler.shared.runUntilComplete()
        record("exiting")
        exit(0)
    }
    var request = URLRequest(url: url)
    request.setValue("fixture", forHTTPHeaderField: "X-Trace")
    if let method { request.httpMethod = method }
    let sent = request
    if verb == "tasks" {
        let task = session.downloadTask(with: sent)
        task.resume()
        record("handed-over", task.taskIdentifier)
        record("all-tasks", "", session.allTasks().map(\.taskIdentifier).sorted().joined(separator: " "))
        exit(0)
    }
    let file = rest.count >= 3 ? URL(fileURLWithPath: rest[2]) : nil
    let transfer: @Sendable () async throws -> String = {
        if verb == "upload", let file {
            let (body, response) = try await session.upload(for: sent, fromFile: file)
            return describe(response) + " body=" + String(decoding: body, as: UTF8.self)
        }
        let (location, response) = try await session.download(for: sent)
        let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int) ?? -1
        return "\(location.path) \(size) " + describe(response)
    }
    guard inHandler else {
        // Running, as an app a person opened: attached, it hears of ends itself, so the scheduler
        // launches no second process for the session meanwhile.
        BGTaskScheduler.shared.finishLaunching()
        await awaitAndRecord(transfer)
        exit(0)
    }
    for id in identifiers {
        BGTaskScheduler.shared.register(.appRefresh(id)) {
            record("started", id)
            await withTaskCancellationHandler {
                await awaitAndRecord(transfer)
            } onCancel: {
                switch promote {
                case "same":
                    session.downloadTask(with: sent).resume()
                    record("promoted", id)
                case "header":
                    var other = sent
                    other.setValue("other", forHTTPHeaderField: "X-Trace")
                    let task = session.downloadTask(with: other)
                    task.resume()
                    record("promoted-different", task.taskIdentifier)
                default:
                    record("cancelled", id)
                }
            }
        }
    }
    await BGTaskScheduler.shared.runUntilComplete()
    record("exiting")
    withExtendedLifetime(session) {}
    exit(0)
}

/// Awaits `transfer` and records what it returned (`awaited`) or threw (`await-threw`).
private func awaitAndRecord(_ transfer: @Sendable () async throws -> String) async {
    do {
        record("awaited", "", try await transfer())
    } catch let error as BGURLSessionError {
        record("await-threw", "", "BGURLSessionError \(error.code): \(error.message)")
    } catch {
        record("await-threw", "", "\(type(of: error))")
    }
}

/// `status=N type=T etag=E` of an `HTTPURLResponse`.
private func describe(_ response: URLResponse) -> String {
    guard let http = response as? HTTPURLResponse else { return "not-http" }
    let type = http.value(forHTTPHeaderField: "Content-Type") ?? "-"
    let etag = http.value(forHTTPHeaderField: "ETag") ?? "-"
    return "status=\(http.statusCode) type=\(type) etag=\(etag)"
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TaskState

extension BGURLSession {
    /// Downloads `request` (its URL, method `GET` or `POST`, and header fields) and returns the
    /// finished file, in the app's downloads folder, with the final response: an
    /// `HTTPURLResponse` with the server's status code and header fields (`Set-Cookie` is not
    /// kept). Apple's `URLSession.download(for:)`, on a background session.
    ///
    /// The scheduler carries the transfer from the start, as any of the session's transfers; the
    /// delegate is not told of it (the result is returned here instead), and its end is
    /// acknowledged once it was returned.
    ///
    /// - Throws: ``BGURLSessionError`` with ``BGURLSessionError/Code/failed`` when the transfer
    ///   failed for good (an HTTP status such as 404 included, unlike Apple's), with `.refused`
    ///   when it was not taken, with `.cancelled` when it was cancelled from outside the call.
    ///   `CancellationError` when the calling task was cancelled: the transfer is then
    ///   cancelled too, unless a cancellation handler of the task *promoted* it by making and
    ///   resuming `downloadTask(with:)` of the same request in this session (same method, URL
    ///   and header fields): that task is this transfer, which goes on after the process has
    ///   gone, and its end reaches the delegate (`.urlSession(identifier)` launch included).
    public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
        let task = BGURLSessionTask(identifier: nextTaskIdentifier(), url: Self.url(of: request), sourceFile: nil,
                                    direction: .download, session: self, requestMethod: request.httpMethod,
                                    requestHeaders: Self.headers(of: request))
        let (record, _) = try await awaitEnd(of: task)
        guard let context = appContext else { throw BGURLSessionError(code: .failed, message: "the app's state is unavailable") }
        let location = URL(fileURLWithPath: "\(context.paths.downloads(of: context.app))/\(record.destination ?? task.taskIdentifier)")
        return (location, Self.response(to: record, requested: task.originalURL))
    }

    /// Downloads `url` with a `GET`: ``download(for:)`` of a request with no header fields.
    public func download(from url: URL) async throws -> (URL, URLResponse) {
        try await download(for: URLRequest(url: url))
    }

    /// Uploads `fileURL` as the body of `request` (method `PUT`, `POST` or `PATCH`) and returns
    /// the answer's body (its first 1 MiB) and the `HTTPURLResponse`. Carried by the scheduler
    /// from the start; errors and cancellation as for ``download(for:)``, and a promotion is
    /// `uploadTask(with:fromFile:)` of the same request and file.
    public func upload(for request: URLRequest, fromFile fileURL: URL) async throws -> (Data, URLResponse) {
        let task = BGURLSessionTask(identifier: nextTaskIdentifier(), url: Self.url(of: request), sourceFile: fileURL,
                                    direction: .upload, session: self, requestMethod: request.httpMethod,
                                    requestHeaders: Self.headers(of: request))
        let (record, body) = try await awaitEnd(of: task)
        return (body, Self.response(to: record, requested: task.originalURL))
    }

    /// Hands `task` over, waits for its end and acknowledges it; throws for an end that is not a
    /// completion, and on cancellation cancels the transfer unless it was promoted. Returns the
    /// record and an upload's kept answer, read before the acknowledgement removes it.
    private func awaitEnd(of task: BGURLSessionTask) async throws -> (TransferRecord, Data) {
        try Task.checkCancellation()
        let id = task.taskIdentifier
        awaited.begin(task)
        // resume() waits up to 5 s for the scheduler's answer: not on the cooperative pool.
        await offThePool { task.resume() }
        let outcome = await withTaskCancellationHandler {
            await awaited.wait(id)
        } onCancel: {
            awaited.cancel(id)
        }
        // The Swift runtime runs all of a task's cancellation handlers under the task's
        // status-record lock, and returning from withTaskCancellationHandler removes this call's
        // handler under that same lock. So by now every handler of the task has run — the app's
        // own onCancel, which may have promoted the transfer, included — and the decision below
        // sees the promotion if there was one.
        switch outcome {
        case .ended(let record):
            awaited.finish(id)
            var body = Data()
            if let context = appContext, record.responseBodyFile != nil {
                // Beside the record; the scheduler removes it with the record once acknowledged.
                body = (try? StateFiles.read(context.paths.uploadResponseBody(record.key))) ?? Data()
            }
            await offThePool { self.tell(CommandAction.transferAcknowledge, task) }
            switch record.state {
            case .completed: return (record, body)
            case .cancelled: throw BGURLSessionError(code: .cancelled, message: record.lastError ?? "cancelled")
            default: throw BGURLSessionError(code: .failed, message: record.lastError ?? "failed")
            }
        case .refused(let error):
            throw error
        case .cancelled:
            if awaited.decide(id) {
                logger.info("transfer \(id) was promoted by a cancellation handler; it goes on in the background")
            } else {
                await offThePool { self.abandon(task) }
            }
            throw CancellationError()
        }
    }

    /// Cancels a transfer its waiter gave up on, and acknowledges it once the scheduler has
    /// cancelled it, so no later delegate hears of it.
    private func abandon(_ task: BGURLSessionTask) {
        guard let context = appContext, let id = try? Identifier(validating: task.taskIdentifier) else { return }
        let connection = SchedulerConnection(context: context)
        connection.tell(.transferCancel(app: context.app, identifier: id))
        _ = connection.enqueue(.transferAcknowledge(app: context.app, identifier: id))
        wakeThread()
    }

    /// What the record says the final response was. Without a kept status (a scheduler from
    /// before these fields), a completed transfer reads as a 200.
    private static func response(to record: TransferRecord, requested: URL) -> URLResponse {
        var fields: [String: String] = [:]
        for header in record.responseHeaders ?? [] {
            // Repeated fields combine with ", " (RFC 9110 §5.3), as HTTPURLResponse has one value per name.
            fields[header.name] = fields[header.name].map { "\($0), \(header.value)" } ?? header.value
        }
        let url = URL(string: record.url) ?? requested
        return HTTPURLResponse(url: url, statusCode: record.responseStatusCode ?? 200, httpVersion: "HTTP/1.1", headerFields: fields)
            ?? URLResponse(url: url, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
    }

    /// `task`, new in this session, or — when its request is that of a transfer an async call
    /// has in flight — a task that *is* that transfer: resuming it promotes the transfer rather
    /// than creating one. When some are in flight and none is the same, one logged line says why.
    func promotingIfAwaited(_ task: BGURLSessionTask) -> BGURLSessionTask {
        let target = awaited.promotionTarget(for: task)
        if let identifier = target.identifier {
            return BGURLSessionTask(identifier: identifier, url: task.originalURL, sourceFile: task.sourceFile, direction: task.direction,
                                    session: self, requestMethod: task.requestMethod, requestHeaders: task.requestHeaders,
                                    promotes: true)
        }
        if let mismatch = target.mismatch {
            logger.notice("\(task.direction.rawValue) task \(task.taskIdentifier) is a new transfer, not the awaited \(mismatch.identifier): \(mismatch.reason)")
        }
        return task
    }

    /// Resuming a task made by ``promotingIfAwaited(_:)``: the awaited transfer goes on past its
    /// waiter. Nothing is sent to the scheduler: the transfer is already there.
    func promote(_ task: BGURLSessionTask) {
        if awaited.promote(task.taskIdentifier) {
            logger.info("transfer \(task.taskIdentifier) is promoted: it goes on when its awaiting call is cancelled")
        } else {
            logger.notice("transfer \(task.taskIdentifier) already ended and was returned to its awaiting call; there is nothing to promote")
        }
    }
}

import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import TaskState

/// One attempt of an upload: the source file streamed as the request body with its length.
/// Uploads do not resume; each attempt sends the whole file.
struct UploadAttempt: Sendable {
    let job: TransferJob
    let upload: TransferJob.UploadFile
    let client: HTTPClient
    let control: AttemptControl
    let reporter: ProgressReporter

    func run() async -> TransferEvent.Kind {
        do {
            try TransferJob.checkURL(job.url)
            let source = try SourceFile(path: upload.sourceFile)
            var request = HTTPClientRequest(url: job.url)
            request.method = upload.method == .post ? .POST : .PUT
            request.headers.add(name: "User-Agent", value: "bgtaskd")
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            let reporter = self.reporter
            reporter.begin(bytes: 0, expected: source.length, validator: ResumeValidator())
            request.body = .stream(SourceChunks(file: source) { reporter.advance(by: $0) },
                                   length: .known(source.length))
            let response = try await client.execute(request, timeout: .hours(24 * 365))
            control.noteProgress()
            for try await _ in response.body { control.noteProgress() }
            let status = Int(response.status.code)
            guard (200..<300).contains(status) else { throw TransferFailure.httpStatus(status) }
            return .completed(statusCode: status)
        } catch {
            switch control.stopReason {
            case .pause: return .paused
            case .cancel: return .cancelled
            case .requestTimeout(let seconds): return .failed(.requestTimedOut(seconds: seconds))
            case .resourceTimeout: return .failed(.resourceTimedOut)
            case nil: return .failed(TransferFailure(classifying: error))
            }
        }
    }
}

import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1
import TaskState
import TransferCore

/// One attempt of an upload: the source file streamed as the request body with its length,
/// redirects followed as ``RedirectTrail`` says (the body sent again from byte 0), and success
/// taken only if the file did not change while it was read. Uploads do not resume.
struct UploadAttempt: Sendable {
    let job: TransferJob
    let upload: TransferJob.UploadFile
    let client: HTTPClient
    let control: AttemptControl
    let reporter: ProgressReporter

    func run() async -> TransferEvent.Kind {
        do {
            try TransferJob.checkURL(job.url)
            return .completed(statusCode: try await send())
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

    /// Sends the request (again after each redirect) and returns the final success status.
    private func send() async throws -> Int {
        var trail = RedirectTrail(url: job.url, method: upload.method.rawValue)
        var sendsBody = true
        while true {
            var request = HTTPClientRequest(url: trail.current.url)
            request.method = HTTPMethod(rawValue: trail.current.method)
            request.headers.add(name: "User-Agent", value: "bgtaskd")
            job.addHeaders(to: &request)
            var source: SourceFile?
            if sendsBody {
                let file = try SourceFile(path: upload.sourceFile)
                source = file
                if !request.headers.contains(name: "Content-Type") {
                    request.headers.add(name: "Content-Type", value: "application/octet-stream")
                }
                let reporter = self.reporter
                reporter.begin(bytes: 0, expected: file.length, validator: ResumeValidator())
                request.body = .stream(SourceChunks(file: file) { reporter.advance(by: $0) }, length: .known(file.length))
            }
            reporter.requested(rangeStart: nil)
            let response = try await client.execute(request, timeout: .hours(24 * 365))
            control.noteProgress()
            var body = ByteBuffer()
            for try await var chunk in response.body {
                control.noteProgress()
                // The app may await the answer (`upload(for:fromFile:)`); a bounded start of it is kept.
                let room = ResponseHeaderRules.bodyLimit - body.readableBytes
                if room > 0, let kept = chunk.readSlice(length: min(room, chunk.readableBytes)) { body.writeImmutableBuffer(kept) }
            }
            // What the server took must be the file as it was when it was opened.
            try source?.checkUnchanged()
            let head = ResponseHead(response)
            switch head.status {
            case 200...299:
                reporter.answered(FinalResponse(head, bodyFile: keep(body)))
                return head.status
            case 301, 302, 303, 307, 308:
                // §15.4: the target is in Location; without exactly one, the redirect cannot be followed.
                guard let location = head.first("Location"), !location.isEmpty else {
                    throw TransferFailure.httpStatus(head.status)
                }
                let hop = try trail.follow(status: head.status, location: location).get()
                sendsBody = hop.sendsBody
            default:
                throw StatusRules.failure(for: head, now: Date().timeIntervalSince1970)
            }
        }
    }

    /// Writes the answer's body where the job says; returns its file name there. A courtesy to an
    /// app that awaits it: the server has taken the upload, so a body that cannot be kept (a full
    /// disk) leaves the upload completed, without one, rather than failed. Not synced: a crash
    /// loses only the copy, never the upload's outcome.
    private func keep(_ body: ByteBuffer) -> String? {
        guard let path = job.responseBodyFile, body.readableBytes > 0,
              (try? StateFiles.write(Data(body.readableBytesView), to: path, durable: false)) != nil else { return nil }
        return URL(fileURLWithPath: path).lastPathComponent
    }
}

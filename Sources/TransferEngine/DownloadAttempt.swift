import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import TaskState

/// One attempt of a download: resume the partial data when the server allows, stream the body to
/// it, and move the whole file into place.
struct DownloadAttempt: Sendable {
    let job: TransferJob
    let files: TransferJob.DownloadFiles
    let client: HTTPClient
    let control: AttemptControl
    let reporter: ProgressReporter

    /// Runs the attempt and returns its final event kind.
    func run() async -> TransferEvent.Kind {
        var partial: PartialData?
        defer { partial?.close() }
        do {
            try TransferJob.checkURL(job.url)
            let destination = try ContainedDestination(destination: files.destination, appFolder: files.appFolder)
            let data = try PartialData(path: files.partialFile)
            partial = data
            if data.length > 0 && job.validator.isEmpty {
                // Without a validator the server cannot tell us whether the bytes we hold belong
                // to the entity it has now, so they cannot be trusted.
                try data.truncate()
            }
            reporter.set(bytes: data.length, expected: nil, validator: job.validator)
            let status = try await fetch(into: data)
            try data.sync()
            data.close()
            try FinalMove.perform(partial: files.partialFile, to: destination)
            return .completed(statusCode: status)
        } catch {
            return ending(error)
        }
    }

    /// The final event for an attempt that threw: a stop from outside wins over the error it caused.
    private func ending(_ error: any Error) -> TransferEvent.Kind {
        switch control.stopReason {
        case .pause: return .paused
        case .cancel:
            PartialData.remove(at: files.partialFile)
            return .cancelled
        case .requestTimeout(let seconds): return .failed(.requestTimedOut(seconds: seconds))
        case .resourceTimeout:
            PartialData.remove(at: files.partialFile)
            return .failed(.resourceTimedOut)
        case nil:
            let failure = TransferFailure(classifying: error)
            // A full disk is worth retrying, but not while this download's own bytes fill it: the
            // scheduler needs room to record anything at all (its state shares the file system).
            if case .diskFull = failure { PartialData.remove(at: files.partialFile) }
            if !failure.isTransient { PartialData.remove(at: files.partialFile) }
            return .failed(failure)
        }
    }

    /// Requests the entity (the rest of it when there is partial data), appends the body, and
    /// returns the status that delivered it. Restarts once from zero when a range is refused.
    private func fetch(into data: PartialData) async throws -> Int {
        var restarted = false
        while true {
            let offset = data.length
            var request = HTTPClientRequest(url: job.url)
            request.method = .GET
            request.headers.add(name: "User-Agent", value: "bgtaskd")
            if offset > 0, let ifRange = job.validator.ifRangeValue {
                request.headers.add(name: "Range", value: "bytes=\(offset)-")
                request.headers.add(name: "If-Range", value: ifRange)
            }
            // The watchdog (no progress, resource deadline) bounds the attempt; this deadline
            // only keeps the client's own timer out of the way.
            let response = try await client.execute(request, timeout: .hours(24 * 365))
            let validator = ResumeValidator(etag: response.headers.first(name: "ETag"),
                                            lastModified: response.headers.first(name: "Last-Modified"))
            let length = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
            let status = Int(response.status.code)
            switch status {
            case 206:
                guard offset > 0, let range = ContentRange(response.headers.first(name: "Content-Range")),
                      range.first == offset else {
                    try data.truncate()
                    throw TransferFailure.invalidResponse("206 for a range that was not asked for")
                }
                let expected = range.total ?? length.map { offset + $0 }
                try await receive(response, into: data, expected: expected, validator: validator)
                return status
            case 416 where offset > 0 && !restarted:
                let total = ContentRange(response.headers.first(name: "Content-Range"))?.total
                if total == offset {
                    // The partial data already holds the whole entity.
                    reporter.begin(bytes: offset, expected: total, validator: job.validator)
                    return 200
                }
                try data.truncate()
                restarted = true
                continue
            case 200..<300:
                // A 200 to a range request: the server ignores ranges or the entity changed.
                if offset > 0 { try data.truncate() }
                try await receive(response, into: data, expected: length, validator: validator)
                return status
            default:
                throw TransferFailure.httpStatus(status)
            }
        }
    }

    private func receive(_ response: HTTPClientResponse, into data: PartialData, expected: Int64?,
                         validator: ResumeValidator) async throws {
        reporter.begin(bytes: data.length, expected: expected, validator: validator)
        for try await chunk in response.body {
            try data.append(chunk)
            reporter.advance(by: chunk.readableBytes)
            // Buffered chunks are handed out even to a cancelled task; a pause must stop here.
            try Task.checkCancellation()
        }
        if let expected, data.length < expected {
            throw TransferFailure.connectionLost("the body ended after \(data.length) of \(expected) bytes")
        }
    }
}

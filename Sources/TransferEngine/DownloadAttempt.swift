import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1
import TaskState
import TransferCore

/// One attempt of a download: ask for the rest of the held representation when ``DownloadRules``
/// allow it, take each response as they say, and move the whole file into place.
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
            let status = try await fetch(into: data)
            try data.sync()
            if let expected = job.expectedSHA256 { try ChecksumCheck.verify(file: files.partialFile, expected: expected) }
            data.close()
            try FinalMove.perform(partial: files.partialFile, to: destination)
            PartialValidatorFile.remove(for: files.partialFile)
            return .completed(statusCode: status)
        } catch {
            // A pause reports what the partial file holds, not the last count sent.
            if control.stopReason == .pause, let partial { reporter.settle(bytes: partial.length) }
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

    /// Requests the representation (the rest of it when the held bytes may be resumed), follows
    /// redirects, takes bodies as ``DownloadRules`` say, and returns the status that completed it.
    private func fetch(into data: PartialData) async throws -> Int {
        var held = data.length > 0 ? data.validator : nil
        var start = DownloadRules.start(heldBytes: data.length, validator: held)
        if case .fromStart(let discard?) = start {
            try data.startOver(with: nil)
            held = nil
            reporter.restarted(discard)
        }
        reporter.set(bytes: data.length, expected: nil, validator: held ?? ResumeValidator())
        var trail = RedirectTrail(url: job.url, method: job.downloadMethod)
        // One restart from byte 0 per attempt: a server that contradicts itself twice fails it.
        var restarted = false
        // The request asks whether a body that ended at a close was whole.
        var probing = false
        func restart(_ reason: String) throws {
            guard !restarted else { throw TransferFailure.invalidResponse(reason) }
            restarted = true
            try data.startOver(with: nil)
            held = nil
            start = .fromStart(discard: nil)
            reporter.restarted(reason)
        }
        while true {
            var rangeStart: Int64?
            var request = HTTPClientRequest(url: trail.current.url)
            request.method = HTTPMethod(rawValue: trail.current.method)
            request.headers.add(name: "User-Agent", value: "bgtaskd")
            job.addHeaders(to: &request)
            // RFC 9110 §12.5.3: without Accept-Encoding any coding is acceptable; the file must
            // hold the representation's own bytes.
            request.headers.add(name: "Accept-Encoding", value: "identity")
            if case .resume(let from, let ifRange) = start {
                rangeStart = from
                request.headers.add(name: "Range", value: "bytes=\(from)-")
                request.headers.add(name: "If-Range", value: ifRange)
            }
            reporter.requested(rangeStart: rangeStart)
            // The watchdog (no progress, resource deadline) bounds the attempt; this deadline
            // only keeps the client's own timer out of the way.
            let response = try await client.execute(request, timeout: .hours(24 * 365))
            control.noteProgress()
            let head = ResponseHead(response)
            let step = DownloadRules.step(for: head, rangeStart: rangeStart, held: held, now: Date().timeIntervalSince1970,
                                          probing: probing)
            probing = false
            switch step {
            case .redirect(let status, let location):
                _ = try trail.follow(status: status, location: location).get()
            case .complete:
                reporter.begin(bytes: data.length, expected: data.length, validator: held ?? ResumeValidator())
                // The held bytes are the whole entity: it completes as a 200 would have, told by
                // what is known of that entity, not by this answer's own fields (a 416's).
                reporter.answered(FinalResponse.held(length: data.length, validator: held))
                return 200
            case .restart(let reason):
                try restart(reason)
            case .fail(let failure):
                throw failure
            case .receive(let body):
                if case .replace(let validator) = body.placement {
                    try data.startOver(with: validator)
                    held = validator
                }
                let bodyStart = data.length
                reporter.begin(bytes: bodyStart, expected: body.total, validator: held ?? ResumeValidator())
                if let overflow = try await receive(response, into: data, length: body.length) {
                    // The bytes of this response cannot be trusted; those held before it can.
                    try data.truncate(to: bodyStart)
                    try restart(overflow)
                    continue
                }
                let after = DownloadRules.afterBody(body, held: data.length)
                switch after {
                case .complete:
                    reporter.answered(.whole(head, length: data.length))
                    return head.status
                case .continueFrom(let offset), .probeFrom(let offset):
                    guard let ifRange = held?.ifRangeValue else { throw TransferFailure.invalidResponse("no validator to continue with") }
                    start = .resume(from: offset, ifRange: ifRange)
                    probing = after == .probeFrom(offset)
                case .fail(let failure):
                    throw failure
                }
            }
        }
    }

    /// Appends the body; returns why it was refused when it ran past `length` (nothing past it is
    /// kept), and throws when it ended short of it.
    private func receive(_ response: HTTPClientResponse, into data: PartialData, length: Int64?) async throws -> String? {
        var received: Int64 = 0
        for try await chunk in response.body {
            if let length, received + Int64(chunk.readableBytes) > length {
                return "the body runs past the \(length) bytes its head announced"
            }
            try data.append(chunk)
            received += Int64(chunk.readableBytes)
            reporter.advance(by: chunk.readableBytes)
            // Buffered chunks are handed out even to a cancelled task; a pause must stop here.
            try Task.checkCancellation()
        }
        if let length, received < length {
            throw TransferFailure.connectionLost("the body ended after \(received) of \(length) bytes")
        }
        return nil
    }
}

extension ResponseHead {
    /// The head of a response from the HTTP client.
    init(_ response: HTTPClientResponse) {
        self.init(status: Int(response.status.code),
                  fields: response.headers.map { ResponseHead.Field($0.name, $0.value) })
    }
}

import NIOCore
import NIOHTTP1

extension LoopbackServer {
    /// Bytes per body write when no rate is set.
    static let chunkSize = 256 * 1024

    /// Answers the requests of one connection in turn until it closes or a fault closes it.
    func serve(_ connection: Connection) async {
        let allocator = connection.channel.allocator
        let outbound = ResponseChannel(channel: connection.channel)
        try? await connection.executeThenClose { inbound, _ in
            var parts = inbound.makeAsyncIterator()
            while let part = try await parts.next() {
                guard case .head(let head) = part else { continue }
                let request = ParsedRequest(head)
                let keepOpen: Bool
                switch head.method {
                case .PUT, .POST:
                    keepOpen = try await receiveUpload(request, parts: &parts, outbound: outbound)
                case .GET, .HEAD:
                    while let next = try await parts.next() { if case .end = next { break } }
                    keepOpen = try await sendEntity(request, outbound: outbound, allocator: allocator)
                default:
                    while let next = try await parts.next() { if case .end = next { break } }
                    record(request.record(status: 405))
                    try await outbound.writeSimple(.methodNotAllowed, "method not allowed\n", keepAlive: request.keepAlive)
                    keepOpen = request.keepAlive
                }
                if !keepOpen { return }
            }
        }
    }

    /// The route for a request: a configured one, else `/generated/<size>`.
    private func route(for request: ParsedRequest) -> (route: Route, faults: Faults)? {
        if let taken = takeRoute(request.path) { return taken }
        let prefix = "/generated/"
        guard request.path.hasPrefix(prefix), let size = Int64(request.path.dropFirst(prefix.count)), size >= 0 else {
            return nil
        }
        let seed = request.query["seed"].flatMap { UInt64($0) } ?? 1
        return (Route(.generated(size: size, seed: seed)), Faults())
    }

    private func sendEntity(_ request: ParsedRequest, outbound: ResponseChannel,
                            allocator: ByteBufferAllocator) async throws -> Bool {
        let found = route(for: request)
        let faults = (found?.faults ?? Faults()).overridden(by: Faults(query: request.query))
        if let status = faults.status {
            record(request.record(status: status))
            try await outbound.writeSimple(HTTPResponseStatus(statusCode: status), "injected status \(status)\n",
                                           keepAlive: request.keepAlive)
            return request.keepAlive
        }
        guard let found, let entity = ServedEntity(found.route.content) else {
            record(request.record(status: 404))
            try await outbound.writeSimple(.notFound, "not found\n", keepAlive: request.keepAlive)
            return request.keepAlive
        }
        let headers = request.head.headers
        var range = faults.ignoreRange ? .whole : RequestedRange(headers.first(name: "Range"), size: entity.size)
        if let ifRange = headers.first(name: "If-Range"), !entity.matches(ifRange: ifRange) { range = .whole }
        let validators = [("ETag", entity.etag), ("Last-Modified", entity.lastModified), ("Accept-Ranges", "bytes")]
        let body: Range<Int64>
        let status: HTTPResponseStatus
        switch range {
        case .unsatisfiable:
            record(request.record(status: 416))
            try await outbound.writeSimple(.rangeNotSatisfiable, "", keepAlive: request.keepAlive,
                                           extraHeaders: validators + [("Content-Range", "bytes */\(entity.size)")])
            return request.keepAlive
        case .whole:
            body = 0..<entity.size
            status = .ok
        case .satisfiable(let requested):
            body = requested
            status = .partialContent
        }
        var responseHeaders = HTTPHeaders(validators)
        responseHeaders.add(name: "Content-Type", value: "application/octet-stream")
        responseHeaders.add(name: "Content-Length", value: String(Int64(body.count) + (faults.extraAnnouncedLength ?? 0)))
        if status == .partialContent {
            responseHeaders.add(name: "Content-Range", value: "bytes \(body.lowerBound)-\(body.upperBound - 1)/\(entity.size)")
        }
        if !request.keepAlive { responseHeaders.add(name: "Connection", value: "close") }
        record(request.record(status: Int(status.code)))
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: responseHeaders)))
        if request.head.method == .HEAD {
            try await outbound.write(.end(nil))
            return request.keepAlive
        }
        let sent = try await streamBody(entity, body, faults: faults, outbound: outbound, allocator: allocator)
        // A dropped or lying response ends by closing the connection, short of what was announced.
        if sent < Int64(body.count) || faults.extraAnnouncedLength != nil { return false }
        try await outbound.write(.end(nil))
        return request.keepAlive
    }

    /// Writes the body bytes in `body`, paced and cut short as `faults` say; returns the count sent.
    private func streamBody(_ entity: ServedEntity, _ body: Range<Int64>, faults: Faults,
                            outbound: ResponseChannel,
                            allocator: ByteBufferAllocator) async throws -> Int64 {
        let total = Int64(body.count)
        let stopAt = Swift.min(total, faults.dropAfter ?? total)
        let stallAt = faults.stallSeconds == nil ? nil : Swift.max(0, faults.stallAfter ?? 0)
        var paceStart = ContinuousClock.now
        var pacedBytes: Int64 = 0
        var sent: Int64 = 0
        var stalled = false
        while sent < stopAt {
            if let stallAt, let seconds = faults.stallSeconds, !stalled, sent >= stallAt {
                stalled = true
                try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                paceStart = .now
                pacedBytes = sent
            }
            var count = Swift.min(Int64(Self.chunkSize), stopAt - sent)
            if let stallAt, !stalled, stallAt > sent { count = Swift.min(count, stallAt - sent) }
            if let rate = faults.bytesPerSecond {
                // Small slices, each sent when the rate allows, so the flow looks smooth.
                count = Swift.min(count, Int64(Swift.max(1, rate / 20)))
                let due = paceStart + .milliseconds((sent - pacedBytes) * 1000 / Int64(rate))
                try await Task.sleep(until: due, clock: .continuous)
            }
            try await outbound.write(.body(.byteBuffer(entity.chunk(at: body.lowerBound + sent, count: Int(count),
                                                                    allocator: allocator))))
            sent += count
        }
        return sent
    }
}

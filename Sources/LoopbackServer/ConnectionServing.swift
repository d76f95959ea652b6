import NIOCore
import NIOHTTP1

extension LoopbackServer {
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
                case .POST where request.path.hasPrefix("/generated/"):
                    // A download by POST (an API that answers a query with a file): the body is
                    // read and dropped, and the answer is what a GET would get.
                    while let next = try await parts.next() { if case .end = next { break } }
                    keepOpen = try await sendEntity(request, outbound: outbound, allocator: allocator)
                case .PUT, .POST, .PATCH:
                    keepOpen = try await receiveUpload(request, parts: &parts, outbound: outbound)
                case .GET, .HEAD:
                    while let next = try await parts.next() { if case .end = next { break } }
                    keepOpen = try await sendEntity(request, outbound: outbound, allocator: allocator)
                default:
                    while let next = try await parts.next() { if case .end = next { break } }
                    record(request.record(status: 405))
                    try await outbound.writeSimple(.methodNotAllowed, "method not allowed\n", to: request)
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
        try await faults.hold?.wait()
        if let status = faults.status {
            record(request.record(status: status))
            try await outbound.writeInjected(status: status, faults: faults, to: request)
            return request.keepAlive
        }
        if case .redirect(let status, let location)? = found?.route.content {
            record(request.record(status: status))
            try await outbound.writeRedirect(status: status, location: location, to: request)
            return request.keepAlive
        }
        guard let found, let entity = ServedEntity(found.route.content, generation: faults.generation) else {
            record(request.record(status: 404))
            try await outbound.writeSimple(.notFound, "not found\n", to: request)
            return request.keepAlive
        }
        switch EntityAnswer(request, entity: entity, faults: faults) {
        case .empty(let status, let headers):
            record(request.record(status: Int(status.code)))
            try await outbound.writeSimple(status, "", to: request, extraHeaders: headers)
            return request.keepAlive
        case .entity(let answer):
            record(request.record(status: Int(answer.status.code)))
            try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: answer.status,
                                                            headers: answer.headers)))
            if request.isHead {
                try await outbound.write(.end(nil))
                return request.keepAlive && !answer.closeDelimited
            }
            let sent = try await streamBody(entity, answer.range, scrambled: answer.scrambled, faults: faults,
                                            outbound: outbound, allocator: allocator)
            // A dropped or lying response ends by closing the connection, short of what was announced.
            if sent < Int64(answer.range.count) || answer.announcesMore { return false }
            try await outbound.write(.end(nil))
            // Closing is what ends a close-delimited body.
            return request.keepAlive && !answer.closeDelimited
        }
    }
}

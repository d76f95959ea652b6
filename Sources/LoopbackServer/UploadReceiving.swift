import NIOCore
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#endif

extension LoopbackServer {
    /// Reads an upload's body as it arrives (counted, hashed, and saved when the route says so),
    /// then answers `201` with the count and hash, or the injected status.
    func receiveUpload(_ request: ParsedRequest, parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator,
                       outbound: ResponseChannel) async throws -> Bool {
        let found = takeRoute(request.path)
        let faults = (found?.faults ?? Faults()).overridden(by: Faults(query: request.query))
        var descriptor: Int32 = -1
        if case .uploadTarget(let path)? = found?.route.content {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        }
        defer { if descriptor >= 0 { _ = close(descriptor) } }
        var hash = SHA256()
        var count: Int64 = 0
        var ended = false
        while let part = try await parts.next() {
            switch part {
            case .head:
                continue
            case .body(var buffer):
                if let limit = faults.dropAfter, count + Int64(buffer.readableBytes) > limit {
                    buffer = buffer.getSlice(at: buffer.readerIndex, length: Int(limit - count)) ?? buffer
                }
                buffer.withUnsafeReadableBytes { bytes in
                    hash.update(bytes)
                    if descriptor >= 0 { _ = write(descriptor, bytes.baseAddress, bytes.count) }
                }
                count += Int64(buffer.readableBytes)
                if let limit = faults.dropAfter, count >= limit {
                    record(upload: ReceivedUpload(method: request.head.method.rawValue, byteCount: count,
                                                  sha256: hash.hexDigest(), isComplete: false), at: request.path)
                    record(request.record(status: 0))
                    return false
                }
            case .end:
                ended = true
            }
            if ended { break }
        }
        let announced = request.head.headers.first(name: "Content-Length").flatMap { Int64($0) }
        let complete = ended && (announced == nil || announced == count)
        if descriptor >= 0 { _ = fsync(descriptor) }
        let digest = hash.hexDigest()
        record(upload: ReceivedUpload(method: request.head.method.rawValue, byteCount: count, sha256: digest,
                                      isComplete: complete), at: request.path)
        guard ended else {
            record(request.record(status: 0))
            return false
        }
        if let status = faults.status {
            record(request.record(status: status))
            try await outbound.writeSimple(HTTPResponseStatus(statusCode: status), "injected status \(status)\n",
                                           keepAlive: request.keepAlive)
            return request.keepAlive
        }
        record(request.record(status: 201))
        try await outbound.writeSimple(.created, "{\"bytes\":\(count),\"sha256\":\"\(digest)\"}\n",
                                       keepAlive: request.keepAlive)
        return request.keepAlive
    }
}

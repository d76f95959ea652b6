import Crypto
import NIOCore
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#endif

extension LoopbackServer {
    /// Reads an upload's body as it arrives (counted, hashed, and saved when the route says so),
    /// then answers `201` with the count and hash, or the injected status, or the route's redirect
    /// (once a ``Faults/hold`` is released).
    func receiveUpload(_ request: ParsedRequest, parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator,
                       outbound: ResponseChannel) async throws -> Bool {
        let found = takeRoute(request.path)
        let faults = (found?.faults ?? Faults()).overridden(by: Faults(query: request.query))
        var redirect: (status: Int, location: String)?
        var descriptor: Int32 = -1
        switch found?.route.content {
        case .uploadTarget(let path)?:
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        case .redirect(let status, let location)?:
            redirect = (status, location)
        default:
            break
        }
        defer { if descriptor >= 0 { _ = close(descriptor) } }
        // A redirect takes nothing in: its body is only counted for the request record.
        func keep(_ upload: ReceivedUpload) {
            if redirect == nil { record(upload: upload, at: request.path) }
        }
        var hash = SHA256()
        var count: Int64 = 0
        var ended = false
        let paceStart = ContinuousClock.now
        while let part = try await parts.next() {
            // A slow reader: not taking parts in stops the channel reading, and TCP slows the client.
            if let rate = faults.bytesPerSecond, count > 0 {
                try await Task.sleep(until: paceStart + .milliseconds(count * 1000 / Int64(rate)), clock: .continuous)
            }
            switch part {
            case .head:
                continue
            case .body(var buffer):
                if let limit = faults.dropAfter, count + Int64(buffer.readableBytes) > limit {
                    buffer = buffer.getSlice(at: buffer.readerIndex, length: Int(limit - count)) ?? buffer
                }
                buffer.withUnsafeReadableBytes { bytes in
                    hash.update(bufferPointer: bytes)
                    if descriptor >= 0 { _ = write(descriptor, bytes.baseAddress, bytes.count) }
                }
                count += Int64(buffer.readableBytes)
                if let limit = faults.dropAfter, count >= limit {
                    let digest = hash.finalize().hexDigest
                    keep(ReceivedUpload(method: request.head.method.rawValue, byteCount: count, sha256: digest,
                                        isComplete: false))
                    record(request.record(status: 0, bodyBytes: count, sha256: digest))
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
        let digest = hash.finalize().hexDigest
        keep(ReceivedUpload(method: request.head.method.rawValue, byteCount: count, sha256: digest,
                            isComplete: complete))
        guard ended else {
            record(request.record(status: 0, bodyBytes: count, sha256: digest))
            return false
        }
        // Held: the body is in (and kept), the answer waits for the test.
        try await faults.hold?.wait()
        if let status = faults.status {
            record(request.record(status: status, bodyBytes: count, sha256: digest))
            try await outbound.writeInjected(status: status, faults: faults, to: request)
            return request.keepAlive
        }
        if let redirect {
            record(request.record(status: redirect.status, bodyBytes: count, sha256: digest))
            try await outbound.writeRedirect(status: redirect.status, location: redirect.location, to: request)
            return request.keepAlive
        }
        record(request.record(status: 201, bodyBytes: count, sha256: digest))
        try await outbound.writeSimple(.created, "{\"bytes\":\(count),\"sha256\":\"\(digest)\"}\n", to: request)
        return request.keepAlive
    }
}

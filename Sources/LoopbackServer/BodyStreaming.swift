import NIOCore
import NIOHTTP1

extension LoopbackServer {
    /// Bytes per body write when no rate is set.
    static let chunkSize = 256 * 1024

    /// Writes the entity's bytes in `body`, paced and cut short as `faults` say, scrambled when
    /// asked; returns the count sent.
    func streamBody(_ entity: ServedEntity, _ body: Range<Int64>, scrambled: Bool, faults: Faults,
                    outbound: ResponseChannel, allocator: ByteBufferAllocator) async throws -> Int64 {
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
            var chunk = entity.chunk(at: body.lowerBound + sent, count: Int(count), allocator: allocator)
            if scrambled {
                chunk.withUnsafeMutableReadableBytes { bytes in
                    for index in bytes.indices { bytes[index] ^= 0x5A }
                }
            }
            try await outbound.write(.body(.byteBuffer(chunk)))
            sent += count
        }
        return sent
    }
}

import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The bytes behind a `GET`, with the validators a client resumes with.
final class ServedEntity {
    let size: Int64
    let etag: String
    let lastModified: String
    private let generated: GeneratedBytes?
    private let descriptor: Int32

    /// The entity for `content`, or `nil` when there is nothing to get (a missing file, an upload
    /// target, a redirect). A `generation` moves generated content to another seed.
    init?(_ content: Route.Content, generation: UInt64? = nil) {
        switch content {
        case .generated(let size, let baseSeed):
            let seed = baseSeed &+ (generation ?? 0)
            self.size = size
            generated = GeneratedBytes(size: size, seed: seed)
            descriptor = -1
            etag = "\"g\(seed)-\(size)\""
            lastModified = Self.httpDate(1_795_341_600 + Int(seed % 1_000_000))
        case .file(let path):
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                _ = close(descriptor)
                return nil
            }
            self.descriptor = descriptor
            generated = nil
            size = Int64(info.st_size)
            etag = "\"f\(info.st_size)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)\""
            lastModified = Self.httpDate(Int(info.st_mtim.tv_sec))
        case .uploadTarget, .redirect:
            return nil
        }
    }

    deinit {
        if descriptor >= 0 { _ = close(descriptor) }
    }

    /// `count` bytes from `offset`, in a new buffer.
    func chunk(at offset: Int64, count: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
            let target = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count])
            if let generated {
                generated.fill(target, from: offset)
                return count
            }
            var done = 0
            while done < count {
                let result = pread(descriptor, target.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if result < 0 && errno == EINTR { continue }
                if result <= 0 { break }
                done += result
            }
            // A file that shrank while being served: pad, the length was already announced.
            if done < count { (target.baseAddress! + done).initializeMemory(as: UInt8.self, repeating: 0, count: count - done) }
            return count
        }
        return buffer
    }

    /// The validator headers sent under `mode`.
    func validators(_ mode: Faults.ETagMode) -> [(String, String)] {
        switch mode {
        case .normal: [("ETag", etag), ("Last-Modified", lastModified)]
        case .none: []
        case .weak: [("ETag", "W/" + etag), ("Last-Modified", lastModified)]
        case .lastModifiedOnly: [("Last-Modified", lastModified)]
        }
    }

    /// Whether an `If-Range` value names this entity as advertised under `mode`: our strong ETag,
    /// or our exact `Last-Modified` when we send one. A weak ETag never matches (RFC 9110
    /// §13.1.5), nor does a validator the server never gave out.
    func matches(ifRange value: String, advertising mode: Faults.ETagMode) -> Bool {
        if value.hasPrefix("W/") { return false }
        if value.hasPrefix("\"") { return mode == .normal && value == etag }
        return mode != .none && value == lastModified
    }

    /// An IMF-fixdate, e.g. `Sun, 22 Nov 2026 10:00:00 GMT`.
    static func httpDate(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

/// A parsed single `Range: bytes=…` request header against an entity of `size` bytes.
enum RequestedRange: Equatable {
    /// Not a single byte range we understand: send the whole entity.
    case whole
    case satisfiable(Range<Int64>)
    case unsatisfiable

    init(_ header: String?, size: Int64) {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else {
            self = .whole
            return
        }
        let spec = header.dropFirst(6)
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2 else {
            self = .whole
            return
        }
        if bounds[0].isEmpty {
            guard let suffix = Int64(bounds[1]), suffix > 0 else { self = .whole; return }
            self = .satisfiable(Swift.max(0, size - suffix)..<size)
            return
        }
        guard let first = Int64(bounds[0]) else { self = .whole; return }
        let last = bounds[1].isEmpty ? size - 1 : (Int64(bounds[1]) ?? -1)
        guard last >= first || bounds[1].isEmpty else { self = .whole; return }
        guard first < size else { self = .unsatisfiable; return }
        self = .satisfiable(first..<(Swift.min(last, size - 1) + 1))
    }
}

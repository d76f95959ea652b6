#if canImport(Glibc)
import Glibc
#endif

/// Standard input as lines of at most `maximumBytes` UTF-8 bytes, read in chunks: a line longer
/// than that is refused as soon as it is, without holding the rest of it.
struct InputLines {
    enum Refusal: Error, CustomStringConvertible {
        case tooLong(Int)
        case notUTF8
        case unreadable(Int32)

        var description: String {
            switch self {
            case .tooLong(let limit): "longer than \(limit) bytes"
            case .notUTF8: "not UTF-8 text"
            case .unreadable(let code): "cannot read standard input: \(String(cString: strerror(code)))"
            }
        }
    }

    let maximumBytes: Int
    private var descriptor: Int32
    private var chunk = [UInt8](repeating: 0, count: 64 << 10)
    private var pending: ArraySlice<UInt8> = []
    private var atEnd = false

    init(descriptor: Int32 = STDIN_FILENO, maximumBytes: Int) {
        self.descriptor = descriptor
        self.maximumBytes = maximumBytes
    }

    /// The next line without its newline, or `nil` at the end of the input.
    mutating func next() throws(Refusal) -> String? {
        var line: [UInt8] = []
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                line += pending[pending.startIndex..<newline]
                pending = pending[(newline + 1)...]
                return try Self.text(line, limit: maximumBytes)
            }
            line += pending
            pending = []
            guard line.count <= maximumBytes else { throw .tooLong(maximumBytes) }
            if atEnd { return line.isEmpty ? nil : try Self.text(line, limit: maximumBytes) }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(errno)
            }
            if count == 0 { atEnd = true } else { pending = chunk[0..<count] }
        }
    }

    private static func text(_ bytes: [UInt8], limit: Int) throws(Refusal) -> String {
        guard bytes.count <= limit else { throw .tooLong(limit) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        return text
    }
}

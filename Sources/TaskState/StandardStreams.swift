import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A program's standard input, output and error as whole reads and writes, without Foundation's
/// `FileHandle`.
public enum StandardStreams {
    /// Writes all of `data` to `descriptor` (1 or 2); a closed pipe or a full disk ends the write.
    public static func write(_ data: Data, to descriptor: Int32 = STDOUT_FILENO) {
        try? StateFiles.writeAll(descriptor, data, path: descriptor == STDERR_FILENO ? "standard error" : "standard output")
    }

    /// Everything `descriptor` gives until its end (standard input by default).
    public static func readToEnd(_ descriptor: Int32 = STDIN_FILENO) -> Data {
        readToEnd(descriptor, maximumSize: .max) ?? Data()
    }

    /// Everything `descriptor` gives until its end, or `nil` as soon as it has given more than
    /// `maximumSize` bytes: an endless stream (`yes |`, `< /dev/zero`) is refused at the bound
    /// instead of filling memory.
    public static func readToEnd(_ descriptor: Int32 = STDIN_FILENO, maximumSize: Int) -> Data? {
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return result }
            guard count <= maximumSize - result.count else { return nil }
            result.append(contentsOf: buffer[0..<count])
        }
    }
}

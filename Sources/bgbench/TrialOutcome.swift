import Foundation
import LoopbackServer
#if canImport(Glibc)
import Glibc
#endif

/// How a download of the `transfer-faults` campaign ended, from its user's point of view.
enum TrialOutcome: String, CaseIterable, Sendable {
    /// Reported success, and the file is one whole acceptable representation.
    case exact
    /// Reported success with other bytes: the failure the campaign exists to find.
    case wrong
    /// Reported failure with a reason, and left no file to be mistaken for the download.
    case failedClearly = "failed clearly"
    /// Neither within the time allowed, or ended some other way.
    case stuck
}

/// One trial as one runner played it.
struct TrialResult: Sendable {
    var trial: FaultTrial
    var outcome: TrialOutcome
    /// Why, in a few words: the error reported, how the bytes differ, the state it was left in.
    var detail: String
    /// From handing the download over to its end (or to giving up on it).
    var seconds: Double
}

/// Compares a finished download with the representations the catalogue allows, every byte.
enum RepresentationCheck {
    enum Verdict: Equatable {
        /// The file is missing.
        case missing
        /// The file equals the representation with this seed.
        case matches(seed: UInt64)
        /// The file is no acceptable representation; says how it differs.
        case differs(String)
    }

    /// Reads `path` in 1 MiB pieces and compares each with every acceptable representation.
    static func verdict(_ path: String, size: Int64, seeds: [UInt64]) -> Verdict {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing }
        guard !seeds.isEmpty else { return .differs("a file of \(info.st_size) bytes, though this case must fail") }
        guard Int64(info.st_size) == size else { return .differs("\(info.st_size) bytes, not \(size)") }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .differs("cannot open it: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let expected = seeds.map { GeneratedBytes(size: size, seed: $0) }
        // The seeds whose bytes the file has matched so far, and where it first differed from
        // the served representation (the first seed).
        var candidates = Array(expected.indices)
        var firstDifference: Int64?
        let piece = 1 << 20
        var found = [UInt8](repeating: 0, count: piece)
        var offset: Int64 = 0
        while offset < size, !candidates.isEmpty {
            let length = Int(min(Int64(piece), size - offset))
            let read = found.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, length, off_t(offset)) }
            guard read == length else { return .differs("short read at byte \(offset)") }
            candidates.removeAll { index in
                let wanted = expected[index].bytes(offset..<(offset + Int64(length)))
                guard wanted.elementsEqual(found.prefix(length)) else {
                    if index == 0, let at = zip(wanted, found).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                        firstDifference = offset + Int64(at)
                    }
                    return true
                }
                return false
            }
            offset += Int64(length)
        }
        if let index = candidates.first { return .matches(seed: expected[index].seed) }
        return .differs("\(size) bytes, first differing from the served bytes at byte \(firstDifference ?? 0)")
    }
}

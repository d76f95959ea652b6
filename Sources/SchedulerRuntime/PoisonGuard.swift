import CLinuxSupport
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The poison-command guard: one bad command must never take the scheduler down twice.
///
/// A command stays in `inbox/new/` until the commit that applies it, so a command whose
/// application crashes the scheduler (a trap, an abort, a bad access) would crash every restart.
/// The guard keeps `applying.json` naming what is in hand: the command being applied (`applying`),
/// then the commands of the turn while its changes are decided and committed (`committing`). It is
/// emptied after each commit. A handler for the fatal signals appends `crashed signal N` to it as
/// the process dies. At the next start, a marker with that line names the culprit:
///
/// - `applying` one command, or `committing` a turn of one command: that command is set aside
///   (quarantined, refused with an outcome and a `commandRejected` event) instead of applied again;
/// - `committing` several: each is applied again in a turn of its own (suspects), so a second
///   crash names it.
///
/// A marker without the crash line (SIGKILL, the OOM killer, a power cut) sets nothing aside:
/// those deaths say nothing about the command, and the inbox's promise that a queued command is
/// applied holds across them. Writes are not synced: the guard is about the process dying, and
/// the page cache outlives the process.
///
/// The file is never cut during a run: what is in hand is written over its start and ended by a
/// zero byte, and emptied by a zero byte at its start. Cutting it three times a turn cost ext4 a
/// truncate each (its blocks freed, the inode on the orphan list, a new block at the next write):
/// 6% of the scheduler's `perf` samples for lone socket commands. The crash line goes at the file's end,
/// after the last zero byte. Start-up cuts it (``reset()``).
final class PoisonGuard {
    /// What the marker says was in hand.
    enum Phase: String, Sendable {
        case applying, committing
    }

    /// What a scheduler that died left in the marker.
    struct Leftover: Equatable, Sendable {
        var phase: Phase
        /// File names in `inbox/new/` (`<id>.json`), or ``socketName(_:)``s.
        var commands: [String]
        /// The fatal signal it died of; `nil` when it was killed (no crash line).
        var signal: Int32?
    }

    let path: String
    private let descriptor: Int32
    /// The same file opened for appending, for the signal handler's line.
    private let appendDescriptor: Int32

    init(root: String) throws(StateError) {
        path = "\(root)/applying.json"
        descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw .symbolicLink(path) }
            throw .system(operation: "cannot open", path: path, errno: errno)
        }
        appendDescriptor = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
        guard appendDescriptor >= 0 else {
            close(descriptor)
            throw .system(operation: "cannot open", path: path, errno: errno)
        }
    }

    deinit {
        close(descriptor)
        close(appendDescriptor)
    }

    /// Arms the crash line: from now on a fatal signal appends `crashed signal N` before the
    /// process dies. Only a scheduler that owns its process does this (not one on a thread of
    /// another program, whose crashes are not the inbox's doing).
    func noteCrashes() {
        bg_install_crash_note(appendDescriptor)
    }

    /// What the previous scheduler left, if it died with something in hand.
    func leftover() -> Leftover? {
        guard let data = try? StateFiles.read(path, maximumSize: 1 << 20) else { return nil }
        return Self.parse(String(decoding: data, as: UTF8.self))
    }

    /// Parses the marker: a phase line, one inbox file name per line, and maybe a crash line.
    /// What is in hand ends at the first zero byte (bytes after it are left from a longer marker);
    /// the crash line is the last line after the last zero byte. A marker without zero bytes (one
    /// an older `bgtaskd` left, which cut the file) is read whole.
    static func parse(_ text: String) -> Leftover? {
        let bytes = Array(text.utf8)
        let inHand = bytes.firstIndex(of: 0).map { bytes[..<$0] } ?? bytes[...]
        let afterZeros = bytes.lastIndex(of: 0).map { bytes[($0 + 1)...] } ?? bytes[...]
        var lines = inHand.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        guard let first = lines.first, let phase = Phase(rawValue: first) else { return nil }
        lines.removeFirst()
        var signal: Int32?
        if let last = afterZeros.split(separator: UInt8(ascii: "\n")).last.map({ String(decoding: $0, as: UTF8.self) }),
           last.hasPrefix("crashed signal ") {
            signal = Int32(last.dropFirst("crashed signal ".count)) ?? 0
            if !bytes.contains(0) { lines.removeLast() }
        }
        return Leftover(phase: phase, commands: lines, signal: signal)
    }

    /// Records what is now in hand, replacing what was there.
    func mark(_ phase: Phase, commands: [String]) {
        let text = ([phase.rawValue] + commands).joined(separator: "\n") + "\n"
        write(Array(text.utf8) + [0])
    }

    /// How the marker names a command that came on the command socket: it has no inbox file, so
    /// at the next start only its id can be refused (its client then writes it into the inbox,
    /// where the refusal's outcome stops it).
    static func socketName(_ id: String) -> String { "socket:\(id)" }

    /// Nothing in hand: a zero byte at the start.
    func clear() {
        write([0])
    }

    /// Nothing in hand and nothing left of an earlier run (start-up, after ``leftover()``): the
    /// file cut to nothing, so that no old crash line can follow this run's zero bytes.
    func reset() {
        guard ftruncate(descriptor, 0) != 0 else { return }
        // Cannot be cut: zeros over all of it, so that no old crash line is left after them (the
        // next SIGKILL would otherwise read as a crash and set the command in hand aside).
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size > 0 else { return }
        write([UInt8](repeating: 0, count: Int(min(info.st_size, 1 << 20))))
    }

    private func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
}

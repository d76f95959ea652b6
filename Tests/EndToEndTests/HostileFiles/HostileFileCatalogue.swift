import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The hostile-file catalogue: the kinds of file that are not what they seem, and every path
/// the programs read. ``HostileFileCatalogueTests`` plants each kind at each path and runs the
/// real programs over it.
enum HostileKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case fifo, symlink, directory, modeZero, empty, huge, nul, truncated
    /// The sample with its numbers replaced by one that stops FoundationEssentials' decoder when
    /// read as an integer (see `JSONNumberLimit`), and such a `format` in front.
    case trappingNumber

    var description: String { rawValue }

    /// 16 digits' worth, which the decoder reads as a `Decimal` that overflows.
    static let trappingToken = "1" + String(repeating: "0", count: 200) + "e-184"

    /// `text` with every number outside strings replaced by ``trappingToken``, and a `format`
    /// holding it added to the first object.
    static func withTrappingNumbers(_ text: String) -> String {
        var result = ""
        var inString = false, escaped = false, inNumber = false
        for character in text {
            if inString {
                result.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                continue
            }
            if character.isNumber || character == "-" || (inNumber && (character == "." || character == "e" || character == "E" || character == "+")) {
                if !inNumber { result += trappingToken }
                inNumber = true
                continue
            }
            inNumber = false
            if character == "\"" { inString = true }
            result.append(character)
        }
        if let brace = result.firstIndex(of: "{") {
            result.insert(contentsOf: "\"format\":\(trappingToken),", at: result.index(after: brace))
        }
        return result
    }
}

/// A path the programs read, relative to the state directory (or the config directory).
struct HostilePath: CustomStringConvertible, Sendable {
    enum Base: Sendable { case state, config }

    var base: Base
    var relative: String
    /// A folder (a per-app folder): a link to it points at an outside folder holding a file.
    var isFolder = false
    /// Contents that would be right there, cut short for `truncated`.
    var sample = #"{"app":"com.example.hostile","identifier":"com.example.hostile.job","kind":"processing"}"#

    var description: String { (base == .config ? "config/" : "") + relative }

    static let app = "com.example.hostile"

    /// Every path the scheduler, `bgctl` and `bgtop --batch` read.
    static let all: [HostilePath] = [
        HostilePath(base: .state, relative: "daemon.json"),
        HostilePath(base: .state, relative: "conditions.json"),
        HostilePath(base: .state, relative: "journal.json", sample: "bgtop-journal 1 40 0123\n{\"format\":1,\"writes\":["),
        HostilePath(base: .state, relative: "daemon.lock", sample: ""),
        HostilePath(base: .state, relative: "processes.json",
                    sample: #"{"processes":[{"app":"com.example.hostile","launchID":"x","launchedAt":"2026-11-22T10:00:00.000Z","pid":1}]}"#),
        HostilePath(base: .state, relative: "resources.json",
                    sample: #"{"version":1,"sampledAt":"2026-11-22T10:00:03.622Z","launches":[{"launchID":"x","app":"com.example.hostile","pids":[2],"cpuSeconds":1,"memoryBytes":1,"peakMemoryBytes":1,"source":"proc","phase":"running","sampledAt":"2026-11-22T10:00:03.622Z"}]}"#),
        HostilePath(base: .state, relative: "launch.key", sample: String(repeating: "ab", count: 32) + "\n"),
        HostilePath(base: .state, relative: "events.jsonl",
                    sample: #"{"message":"x","time":"2026-11-22T10:00:00.000Z","type":"daemonStarted"}"# + "\n"),
        HostilePath(base: .state, relative: "events.1.jsonl",
                    sample: #"{"message":"x","time":"2026-11-22T10:00:00.000Z","type":"daemonStarted"}"# + "\n"),
        HostilePath(base: .state, relative: "requests/\(app)/\(app).job.json"),
        HostilePath(base: .state, relative: "requests/\(app)", isFolder: true),
        HostilePath(base: .state, relative: "tasks/\(app)/\(app).work.json"),
        HostilePath(base: .state, relative: "tasks/\(app)", isFolder: true),
        HostilePath(base: .state, relative: "transfers/\(app)/\(app).dl.json"),
        HostilePath(base: .state, relative: "transfers/\(app)/\(app).dl.progress"),
        HostilePath(base: .state, relative: "pushes/\(app)/push-1.json",
                    sample: #"{"app":"com.example.hostile","id":"push-1","payload":"{\"aps\":{\"content-available\":1}}","priority":10,"receivedAt":"2026-11-22T10:00:00.000Z","coalescedCount":0}"#),
        HostilePath(base: .state, relative: "pushes/\(app)", isFolder: true),
        HostilePath(base: .state, relative: "subscriptions/\(app).json",
                    sample: #"{"app":"com.example.hostile","streams":[{"url":"http://127.0.0.1:9/t","state":"connected","failures":0}]}"#),
        HostilePath(base: .state, relative: "usage/\(app).json",
                    sample: #"{"app":"com.example.hostile","uses":["2026-11-20T08:10:00.000Z","2026-11-21T08:12:00.000Z"]}"#),
        HostilePath(base: .state, relative: "apps/\(app).json", sample: #"{"id":"com.example.hostile","enabled":true}"#),
        HostilePath(base: .state, relative: "outcomes/0000-hostile.json"),
        HostilePath(base: .state, relative: "inbox/new/0000-hostile.json",
                    sample: #"{"format":1,"id":"0000-hostile","issuedAt":"2026-11-22T10:00:00Z","type":"status"}"#),
        // The app the sessions launch (``HostileSession/probeApp``), so its log is opened.
        HostilePath(base: .state, relative: "logs/com.example.probe.log", sample: "log line\n"),
        HostilePath(base: .state, relative: "inbox/new", isFolder: true),
        HostilePath(base: .config, relative: "apps", isFolder: true),
        HostilePath(base: .config, relative: "apps/\(app).json",
                    sample: #"{"id":"com.example.hostile","executable":"/bin/true","permittedIdentifiers":[],"backgroundModes":[]}"#),
        HostilePath(base: .config, relative: "settings.json", sample: #"{"appRefreshBudgetSeconds":30}"#),
    ]
}

/// What was planted outside the state directory (a link's target), to check it is untouched.
struct OutsideCanary {
    var path: String
    var contents: Data

    /// Whether it is still there, unchanged.
    var isIntact: Bool { FileManager.default.contents(atPath: path) == contents }
}

enum HostilePlanter {
    /// Puts `kind` at `path` in `env`; returns the outside file a link points to, if any.
    @discardableResult
    static func plant(_ kind: HostileKind, at path: HostilePath, in env: TestEnvironment) throws -> OutsideCanary? {
        let full = (path.base == .state ? env.state : env.config) + "/" + path.relative
        try FileManager.default.createDirectory(atPath: StateFilesTestPath.parent(of: full), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        // A folder the session already made (config/apps holds the probe app) is replaced,
        // except by `directory`, which adds a folder inside it.
        if path.isFolder, kind != .directory { try? FileManager.default.removeItem(atPath: full) }
        switch kind {
        case .fifo:
            guard mkfifo(full, 0o600) == 0 else { throw TestFailure("mkfifo \(full): \(errno)") }
        case .symlink:
            let outside = env.root + "/outside-\(UUID().uuidString.prefix(6))"
            let contents = Data(path.sample.utf8)
            let canary: String
            if path.isFolder {
                try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
                canary = "\(outside)/\(HostilePath.app).job.json"
            } else {
                canary = outside
            }
            try contents.write(to: URL(fileURLWithPath: canary))
            guard symlink(outside, full) == 0 else { throw TestFailure("symlink \(full): \(errno)") }
            return OutsideCanary(path: canary, contents: contents)
        case .directory:
            try FileManager.default.createDirectory(atPath: full + "/inner", withIntermediateDirectories: true)
        case .modeZero:
            try Data(path.sample.utf8).write(to: URL(fileURLWithPath: full))
            chmod(full, 0)
        case .empty:
            try Data().write(to: URL(fileURLWithPath: full))
        case .huge:
            // Sparse: 17 MiB, more than any state file may be, without writing 17 MiB.
            let fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            defer { close(fd) }
            guard fd >= 0, ftruncate(fd, 17 << 20) == 0 else { throw TestFailure("huge file \(full): \(errno)") }
        case .nul:
            try Data(repeating: 0, count: 4096).write(to: URL(fileURLWithPath: full))
        case .truncated:
            let bytes = Data(path.sample.utf8)
            try bytes.prefix(max(1, bytes.count * 2 / 3)).write(to: URL(fileURLWithPath: full))
        case .trappingNumber:
            try Data(HostileKind.withTrappingNumbers(path.sample).utf8).write(to: URL(fileURLWithPath: full))
        }
        return nil
    }
}

enum StateFilesTestPath {
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}

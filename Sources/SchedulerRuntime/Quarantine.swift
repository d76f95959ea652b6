import Foundation
import TaskState

/// Moves unusable files out of the way, keeping them for a person to look at.
struct Quarantine {
    let paths: StatePaths

    /// Moves `path` into `quarantine/` under a name that records when and where it came from, and
    /// writes the reason beside it. Returns the new path.
    func isolate(_ path: String, reason: String, now: Date) throws -> String {
        try StateFiles.ensureDirectory(paths.quarantine)
        let relative = path.hasPrefix(paths.root + "/") ? String(path.dropFirst(paths.root.count + 1)) : path
        let stamp = JSONFormat.string(from: now).replacingOccurrences(of: ":", with: "")
        let flat = relative.replacingOccurrences(of: "/", with: "__")
        var target = "\(paths.quarantine)/\(stamp)-\(flat)"
        var suffix = 1
        while StateFiles.exists(target) {
            suffix += 1
            target = "\(paths.quarantine)/\(stamp)-\(suffix)-\(flat)"
        }
        try StateFiles.move(path, to: target)
        try StateFiles.write(Data("\(relative): \(reason)\n".utf8), to: "\(target).reason", durable: false)
        return target
    }
}

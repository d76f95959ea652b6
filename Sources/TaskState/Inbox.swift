import FoundationEssentials

/// The Maildir-style command inbox: writers create `inbox/tmp/<id>.json`, fsync it, and rename it
/// into `inbox/new/`; from then on the command cannot be lost. Only the scheduler reads and removes
/// commands from `new/`.
public struct Inbox: Sendable {
    public let paths: StatePaths

    public init(paths: StatePaths) {
        self.paths = paths
    }

    /// Makes `command` durable in `inbox/new/`. When this returns, the command will be applied
    /// exactly once, even if the scheduler is not running yet.
    public func enqueue(_ command: Command) throws(StateError) {
        try StateFiles.ensureDirectory(paths.inbox)
        try StateFiles.ensureDirectory(paths.inboxTemporary)
        try StateFiles.ensureDirectory(paths.inboxNew)
        let data: Data
        do {
            data = try JSONFormat.encode(command)
        } catch {
            throw .malformed("cannot encode command: \(error)")
        }
        let name = "\(command.id).json"
        let temporary = "\(paths.inboxTemporary)/\(name)"
        // inbox/tmp is already the Maildir's temporary place: the file is created there directly
        // (no temp-of-a-temp), so a command costs two fsyncs: the file, then new/ after the rename.
        try StateFiles.create(data, at: temporary, durable: true)
        try StateFiles.move(temporary, to: "\(paths.inboxNew)/\(name)")
        try StateFiles.syncDirectory(paths.inboxNew)
    }

    /// The file names waiting in `inbox/new/`, oldest first, at most `limit`.
    public func waiting(limit: Int = .max) throws(StateError) -> [String] {
        let names = try StateFiles.names(in: paths.inboxNew).filter { $0.hasSuffix(".json") }
        return Array(names.prefix(limit))
    }

    /// Reads one waiting command.
    public func read(_ name: String) throws(StateError) -> Command {
        let data = try StateFiles.read(path(of: name), maximumSize: 64 << 10)
        return try JSONFormat.decode(Command.self, from: data)
    }

    /// The full path of a waiting command file.
    public func path(of name: String) -> String { "\(paths.inboxNew)/\(name)" }
}

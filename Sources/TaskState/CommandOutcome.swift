import FoundationEssentials

/// The scheduler's answer to one command: `outcomes/<command-id>.json`, kept for a while so the
/// program that wrote the command can read it.
public struct CommandOutcome: Codable, Hashable, Sendable {
    /// A refusal: the error's name (`notPermitted`, `tooManyPendingTaskRequests`, ...) and its text.
    public struct Refusal: Codable, Hashable, Sendable {
        public var name: String
        public var message: String

        public init(name: String, message: String) {
            self.name = name
            self.message = message
        }
    }

    public var command: String
    public var type: CommandAction.Name?
    public var appliedAt: Date
    /// What happened, in one line, when the command was carried out.
    public var message: String?
    /// Set when the command was refused; nothing changed then.
    public var error: Refusal?
    /// The identifier a command produced (`beginFinishing`) or acted on.
    public var identifier: Identifier?

    public init(command: String, type: CommandAction.Name?, appliedAt: Date, message: String? = nil,
                error: Refusal? = nil, identifier: Identifier? = nil) {
        self.command = command
        self.type = type
        self.appliedAt = appliedAt
        self.message = message
        self.error = error
        self.identifier = identifier
    }

    public var succeeded: Bool { error == nil }
}

extension CommandOutcome {
    /// The outcome the scheduler committed for command `id` (`outcomes/<id>.json`), if there is a
    /// readable one.
    public static func stored(_ id: String, in paths: StatePaths) -> CommandOutcome? {
        guard let data = try? StateFiles.read(paths.outcome(id)) else { return nil }
        return try? JSONFormat.decode(CommandOutcome.self, from: data)
    }
}

extension CommandOutcome {
    /// The outcome's file (`outcomes/<id>.json`, and the command socket's answer): the bytes
    /// `JSONFormat.encode` makes of it, written directly (``PrettyJSONObject``).
    public func fileContents() -> Data {
        var object = PrettyJSONObject(capacity: 256 + (message?.utf8.count ?? 0) + (error?.message.utf8.count ?? 0))
        object.date("appliedAt", appliedAt)
        object.string("command", command)
        if let error {
            object.object("error") { refusal in
                refusal.string("message", error.message)
                refusal.string("name", error.name)
            }
        }
        object.string("identifier", identifier?.rawValue)
        object.string("message", message)
        object.string("type", type?.rawValue)
        return object.finished()
    }
}

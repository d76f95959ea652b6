/// The names a command can be refused with: the `error.name` of an outcome, as `bgctl` prints it
/// and the library maps it. The one list of them; see `docs/state-format.md`.
public enum RefusalCode: String, Codable, Sendable, CaseIterable {
    case notPermitted
    case tooManyPendingTaskRequests
    case unavailable
    case unknownApp
    case noSuchRequest
    case noSuchTask
    case alreadyRunning
    case alreadyExpiring
    case ambiguous
    case invalidCommand
    case launchFailed
    case notAppProcess
    /// `reportCall` of a call UUID the app already reported.
    case alreadyReported
}

extension CommandOutcome.Refusal {
    /// A refusal with one of the known names.
    public init(_ code: RefusalCode, message: String) {
        self.init(name: code.rawValue, message: message)
    }

    /// The refusal's name as a code; `nil` for a name this version does not know (the wire keeps
    /// any string, so a newer scheduler's names still decode).
    public var code: RefusalCode? { RefusalCode(rawValue: name) }
}

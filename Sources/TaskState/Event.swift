import Foundation

/// One line of the event log (`events.jsonl`): what happened, when, to what.
public struct Event: Codable, Hashable, Sendable {
    /// What happened.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case daemonStarted, daemonStopped
        case submitted, replaced, cancelled, refused
        case launched, launchFailed, adopted, interrupted, attached, detached
        case completed, exited, expired, killed, throttled
        case appEnabled, appDisabled, manifestLoaded, manifestError
        case conditionsChanged, quarantined, commandRejected
        case transferCreated, transferStarted, transferCompleted, transferFailed, transferRetrying
        case transferPaused, transferResumed, transferCancelled
        /// A download's held bytes could not be resumed (RFC 9110 rules) and it starts from byte 0.
        case transferRestarted
        /// The scheduler made a new launch key (`launch.key`): at first start, or because the kept
        /// one was missing or unusable. Launch tokens given out before no longer verify.
        case launchKeyCreated
    }

    public var time: Date
    public var type: Kind
    public var app: Identifier?
    public var identifier: Identifier?
    public var kind: TaskKind?
    public var pid: Int32?
    /// The command that caused it.
    public var command: String?
    /// Launch reason, refusal name, signal, ... depending on the event.
    public var reason: String?
    /// One readable line.
    public var message: String

    public init(time: Date, type: Kind, app: Identifier? = nil, identifier: Identifier? = nil,
                kind: TaskKind? = nil, pid: Int32? = nil, command: String? = nil, reason: String? = nil,
                message: String) {
        self.time = time
        self.type = type
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.pid = pid
        self.command = command
        self.reason = reason
        self.message = message
    }
}

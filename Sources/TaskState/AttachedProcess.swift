import FoundationEssentials

/// A running process of an app that registered its launch handlers and told the scheduler so
/// (`attach`): requests of that app that come due are handed to it instead of starting a second
/// process, the way a system hands a background task to an app that is already running.
public struct AttachedProcess: Codable, Hashable, Sendable {
    public var pid: Int32
    /// The process's start time in clock ticks since boot, so a reused pid is never taken for it.
    public var processStartTicks: UInt64?
    /// The group killed when a task handed to the process overruns: the process's own group when
    /// it leads one, else `nil` (only the process is killed, never a shell's group it shares).
    public var processGroup: Int32?
    /// The task identifiers it registered handlers for; only those are handed to it.
    public var identifiers: [Identifier]
    /// It registered a push handler: background pushes of the app are handed to it.
    public var acceptsPushes: Bool?
    /// It registered for VoIP pushes (a `PushRegistry`): VoIP pushes of the app are handed to it.
    public var acceptsVoIPPushes: Bool?
    public var attachedAt: Date

    public init(pid: Int32, processStartTicks: UInt64? = nil, processGroup: Int32? = nil,
                identifiers: [Identifier], acceptsPushes: Bool? = nil, acceptsVoIPPushes: Bool? = nil, attachedAt: Date) {
        self.pid = pid
        self.processStartTicks = processStartTicks
        self.processGroup = processGroup
        self.identifiers = identifiers
        self.acceptsPushes = acceptsPushes
        self.acceptsVoIPPushes = acceptsVoIPPushes
        self.attachedAt = attachedAt
    }

    /// Whether every one of `identifiers` has a handler in this process.
    public func handles(_ identifiers: some Sequence<Identifier>) -> Bool {
        let registered = Set(self.identifiers)
        return identifiers.allSatisfy(registered.contains)
    }
}

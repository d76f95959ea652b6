import FoundationEssentials

/// A call report an app owes for one delivered VoIP push, in `apps/<app>.json` (`voip.owed`):
/// the push, the process it was handed to, and when the report is due. Each push is its own
/// debt, so a process that took a later push is held to account for it even when the process
/// that took an earlier one is gone. See `docs/scheduling.md#voip-pushes`.
public struct VoIPDebt: Codable, Hashable, Sendable {
    /// The push's id (`nil` for a debt read from a file written before debts were kept per push).
    public var push: Identifier?
    /// The process the push went to: killed if the report does not come in time.
    public var pid: Int32?
    /// The report is due by then.
    public var dueBy: Date

    public init(push: Identifier?, pid: Int32?, dueBy: Date) {
        self.push = push
        self.pid = pid
        self.dueBy = dueBy
    }

    enum CodingKeys: String, CodingKey { case push, pid, dueBy }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Without a due date a debt means nothing; the rest only narrows what is killed.
        dueBy = try container.decode(Date.self, forKey: .dueBy)
        push = try? container.decodeIfPresent(Identifier.self, forKey: .push)
        // Pid 1 and below are never one to kill.
        pid = (try? container.decodeIfPresent(Int32.self, forKey: .pid)).flatMap { $0 > 1 ? $0 : nil }
    }

    /// Reports owed per app at most: a VoIP push that arrives while this many are owed is
    /// dropped, so the record stays small whatever a push server sends.
    public static let maximumOwed = 16
}

/// One element of a list read leniently: an unreadable element becomes `nil` instead of making
/// the whole list unreadable.
struct LenientElement<Wrapped: Decodable>: Decodable {
    var value: Wrapped?
    init(from decoder: any Decoder) throws { value = try? Wrapped(from: decoder) }
}

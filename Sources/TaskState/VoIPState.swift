import FoundationEssentials

/// An app's standing for VoIP pushes, in `apps/<app>.json` (`voip`): the report it owes, the
/// failures to report in a row, and whether its VoIP pushes are dropped. See
/// `docs/scheduling.md#voip-pushes`.
///
/// Decoded leniently: a field that is missing or unreadable is left out rather than making the
/// whole app record unreadable, since every field only ever narrows what the app gets back to
/// the defaults.
public struct VoIPState: Codable, Hashable, Sendable {
    /// Failures to report in a row (killed for `voipNotReported`); 0 after a report or a use.
    public var strikes: Int
    /// When the last VoIP push was delivered.
    public var lastDelivery: Date?
    /// When the app last reported an incoming call.
    public var lastReport: Date?
    /// Since when the app's VoIP pushes are dropped (`voipStrikes` failures in a row), until a
    /// person uses the app.
    public var blockedSince: Date?
    /// The earliest report the app owes (the first of ``owed``): kept for readers of this field.
    public var reportDueBy: Date?
    /// The process the earliest owed report's push was handed to (the first of ``owed``).
    public var deliveredToPID: Int32?
    /// The reports owed, one per delivered VoIP push not yet answered, earliest first (at most
    /// ``VoIPDebt/maximumOwed``). Set through ``setDebts(_:)``, which keeps ``reportDueBy`` and
    /// ``deliveredToPID`` in step.
    public private(set) var owed: [VoIPDebt]?
    /// How the app last showed a call: `dbus`, `notify-send` or `log`.
    public var lastNotifier: String?
    /// The UUIDs of the latest calls reported (at most ``rememberedCalls``), so a second report
    /// of one is refused.
    public var recentCalls: [String]?

    /// Call UUIDs remembered per app.
    public static let rememberedCalls = 32

    public init(strikes: Int = 0, lastDelivery: Date? = nil, lastReport: Date? = nil, blockedSince: Date? = nil,
                reportDueBy: Date? = nil, deliveredToPID: Int32? = nil, lastNotifier: String? = nil, recentCalls: [String]? = nil,
                owed: [VoIPDebt]? = nil) {
        self.strikes = strikes
        self.lastDelivery = lastDelivery
        self.lastReport = lastReport
        self.blockedSince = blockedSince
        self.reportDueBy = reportDueBy
        self.deliveredToPID = deliveredToPID
        self.lastNotifier = lastNotifier
        self.recentCalls = recentCalls
        if let owed { setDebts(owed) }
    }

    enum CodingKeys: String, CodingKey {
        case strikes, lastDelivery, lastReport, blockedSince, reportDueBy, deliveredToPID, lastNotifier, recentCalls, owed
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // A count from a file: out of range reads as the nearest sensible value.
        strikes = min(max((try? container.decodeIfPresent(Int.self, forKey: .strikes)) ?? 0, 0), 1000)
        lastDelivery = try? container.decodeIfPresent(Date.self, forKey: .lastDelivery)
        lastReport = try? container.decodeIfPresent(Date.self, forKey: .lastReport)
        blockedSince = try? container.decodeIfPresent(Date.self, forKey: .blockedSince)
        reportDueBy = try? container.decodeIfPresent(Date.self, forKey: .reportDueBy)
        deliveredToPID = (try? container.decodeIfPresent(Int32.self, forKey: .deliveredToPID)).flatMap { $0 > 1 ? $0 : nil }
        lastNotifier = (try? container.decodeIfPresent(String.self, forKey: .lastNotifier)).flatMap {
            CallReport.notifiers.contains($0) ? $0 : nil
        }
        recentCalls = (try? container.decodeIfPresent([String].self, forKey: .recentCalls)).map {
            Array($0.filter { CallReport.uuidProblem($0) == nil }.suffix(Self.rememberedCalls))
        }
        if let debts = try? container.decodeIfPresent([LenientElement<VoIPDebt>].self, forKey: .owed) {
            setDebts(debts.compactMap(\.value))
        }
    }

    /// The reports owed, earliest first: ``owed``, or for a record written before debts were
    /// kept per push, the one ``reportDueBy`` names.
    public var debts: [VoIPDebt] {
        owed ?? reportDueBy.map { [VoIPDebt(push: nil, pid: deliveredToPID, dueBy: $0)] } ?? []
    }

    /// Replaces the reports owed (earliest first, at most ``VoIPDebt/maximumOwed``: the ones due
    /// first are kept) and sets ``reportDueBy`` and ``deliveredToPID`` from the earliest.
    public mutating func setDebts(_ debts: [VoIPDebt]) {
        let kept = Array(debts.enumerated().sorted { ($0.element.dueBy, $0.offset) < ($1.element.dueBy, $1.offset) }
            .map(\.element).prefix(VoIPDebt.maximumOwed))
        owed = kept.isEmpty ? nil : kept
        reportDueBy = kept.first?.dueBy
        deliveredToPID = kept.first?.pid
    }

    /// Whether the app's VoIP pushes are dropped.
    public var isBlocked: Bool { blockedSince != nil }

    /// The short state `bgctl apps` and `bgtop` show: `blocked`, `ringing` (a report is owed),
    /// `N strike(s)`, or `ok`.
    public var summary: String {
        if isBlocked { return "blocked" }
        if reportDueBy != nil { return "ringing" }
        if strikes > 0 { return "\(strikes) strike\(strikes == 1 ? "" : "s")" }
        return "ok"
    }
}

import FoundationEssentials

/// When a person used an app: `usage/<app>.json`. A use is a process of the app that a person
/// started (not the scheduler), recorded by the library when it finishes launching, by
/// `bgctl app used`, or imported from a trace (`bgctl usage import`).
public struct UsageHistory: Codable, Hashable, Sendable {
    /// Uses older than this are forgotten (and refused on input).
    public static let maximumAge: TimeInterval = 365 * 86_400
    /// The newest uses kept per app.
    public static let maximumUses = 4096

    public var app: Identifier
    /// Oldest first, each once.
    public var uses: [Date]

    public init(app: Identifier, uses: [Date] = []) {
        self.app = app
        self.uses = uses
    }

    enum CodingKeys: String, CodingKey { case app, uses }

    /// A file holding more uses than are ever kept, or out of order, is not one this program
    /// wrote: refused (and quarantined), so it never costs the scheduler more than a bounded model.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        app = try container.decode(Identifier.self, forKey: .app)
        uses = try container.decode([Date].self, forKey: .uses)
        guard uses.count <= Self.maximumUses else {
            throw DecodingError.dataCorruptedError(forKey: .uses, in: container,
                                                   debugDescription: "at most \(Self.maximumUses) uses are kept, not \(uses.count)")
        }
        guard zip(uses, uses.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw DecodingError.dataCorruptedError(forKey: .uses, in: container, debugDescription: "uses must be in order, each once")
        }
    }

    /// The history with `more` uses added, sorted, without repeats (to the millisecond, as the
    /// files keep them), the oldest beyond ``maximumUses`` or ``maximumAge`` before `now` dropped.
    public func adding(_ more: [Date], now: Date) -> UsageHistory {
        let oldest = now.addingTimeInterval(-Self.maximumAge)
        // A use from the future (a clock that was wrong) would outweigh every real one.
        let newest = now.addingTimeInterval(60)
        var seen = Set<Int64>()
        var merged: [Date] = []
        for date in (uses + more).sorted() where date >= oldest && date <= newest {
            let millisecond = SafeNumber.int64(date.timeIntervalSince1970 * 1000, .down)
            if seen.insert(millisecond).inserted { merged.append(date) }
        }
        return UsageHistory(app: app, uses: Array(merged.suffix(Self.maximumUses)))
    }

    /// The latest use, if any.
    public var lastUse: Date? { uses.last }
}

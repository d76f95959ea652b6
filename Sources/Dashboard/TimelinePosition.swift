import FoundationEssentials

/// Where the timeline looks: its zoom, how far it is scrolled from now, the selected lane, and
/// whether the selected lane's runs are listed. Pure data, kept in the overlay while it is open.
public struct TimelinePosition: Sendable, Hashable {
    /// The window widths `+` and `-` step through.
    public static let spans: [TimeInterval] = [600, 1800, 3600, 3 * 3600, 12 * 3600, 24 * 3600]
    /// The share of the window right of "now" when it follows now: room for what comes next.
    public static let futureShare = 0.25
    /// How far `←`/`→` move the window, as a share of its width.
    public static let scrollShare = 0.25
    /// How far the window may be scrolled into the past (the history's retention) and the future.
    public static let furthestBack: TimeInterval = 26 * 3600
    public static let furthestAhead: TimeInterval = 24 * 3600

    /// Index into ``spans``.
    public var zoom: Int
    /// Seconds the window is moved from its place around now (negative: into the past); 0 follows now.
    public var offset: TimeInterval
    /// The selected lane (an index into the lanes shown).
    public var lane: Int
    /// The selected lane's runs in the window are listed under the lanes.
    public var showsRuns: Bool

    public init(zoom: Int = 2, offset: TimeInterval = 0, lane: Int = 0, showsRuns: Bool = false) {
        self.zoom = min(max(0, zoom), Self.spans.count - 1)
        self.offset = offset
        self.lane = lane
        self.showsRuns = showsRuns
    }

    public var span: TimeInterval { Self.spans[zoom] }

    /// The window's start and end for a given now.
    public func window(now: Date) -> (start: Date, end: Date) {
        let end = now.addingTimeInterval(span * Self.futureShare + offset)
        return (end.addingTimeInterval(-span), end)
    }

    /// Zooms by `steps` (negative: in), keeping the middle of the window where it was; a window
    /// that follows now keeps following it.
    public mutating func zoom(by steps: Int) {
        let next = min(max(0, zoom + steps), Self.spans.count - 1)
        guard next != zoom else { return }
        if offset != 0 {
            // The middle is now + offset + span × (share − ½); keep it.
            offset += (Self.spans[zoom] - Self.spans[next]) * (Self.futureShare - 0.5)
        }
        zoom = next
        clamp()
    }

    /// Scrolls by `steps` quarter windows (negative: back in time).
    public mutating func scroll(by steps: Int) {
        offset += Double(steps) * span * Self.scrollShare
        clamp()
    }

    private mutating func clamp() {
        offset = min(max(offset, -Self.furthestBack), Self.furthestAhead)
        // Rounding would otherwise leave a window a hair away from following now.
        if abs(offset) < 0.001 { offset = 0 }
    }

    /// The width of the lanes' names on a screen `width` cells wide: room for
    /// `com.example.podcasts` at 80 columns.
    static func labelWidth(screenWidth width: Int) -> Int { min(28, max(16, width / 4)) }

    /// The cells of the window on a screen `width` cells wide (the box, the names and a gap left of it).
    static func laneWidth(screenWidth width: Int) -> Int { max(1, width - 5 - labelWidth(screenWidth: width)) }

    /// How long one cell of the window lasts on a screen `width` cells wide: while the window
    /// follows now, the picture moves by a cell this often.
    public func cellDuration(screenWidth width: Int) -> TimeInterval {
        span / Double(Self.laneWidth(screenWidth: width))
    }

    /// "1 h", "30 min", "24 h".
    public var spanText: String {
        span >= 3600 ? "\(Int(span / 3600)) h" : "\(Int(span / 60)) min"
    }
}

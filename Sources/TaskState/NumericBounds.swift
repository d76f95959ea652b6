import FoundationEssentials

/// The documented range of every number a command carries (see `docs/state-format.md#numbers` and
/// `docs/cli.md`). `bgctl` checks its options against these before it writes anything, and the
/// scheduler checks every command against them again before applying it: the inbox is a trust
/// boundary, and a number out of range is refused there with its reason instead of reaching a
/// conversion that could trap.
public enum NumericBounds {
    /// `timeoutIntervalForRequest`: 1 s to 30 days.
    public static let requestTimeout: ClosedRange<Double> = 1...2_592_000
    /// `timeoutIntervalForResource`: 1 s to 365 days.
    public static let resourceTimeout: ClosedRange<Double> = 1...31_536_000
    /// `countOfBytesClientExpectsToReceive`/`Send`: 0 to 2^50 bytes (1 PiB).
    public static let expectedBytes: ClosedRange<Int64> = 0...(1 << 50)
    /// A process id: 1 to 4194304, Linux's largest `pid_max`.
    public static let pid: ClosedRange<Int64> = 1...4_194_304
    /// How far from now a date in a command may be (`earliestBeginDate`, `issuedAt`), either way:
    /// ten years of 365 days. Also the largest `+SECONDS` of `--earliest`.
    public static let dateReach: TimeInterval = 315_360_000
    /// Uses in one `appUsed` command: 1 to 1,000, so the largest such command stays well within
    /// the inbox's 64 KiB (`bgctl usage import` sends more in several).
    public static let usesPerCommand: ClosedRange<Int64> = 1...1_000
    /// `bgctl events --limit`: 0 to 1,000,000 events.
    public static let eventLimit: ClosedRange<Int64> = 0...1_000_000

    /// The dates allowed at `now`: ``dateReach`` either side.
    public static func dates(around now: Date) -> ClosedRange<Date> {
        now.addingTimeInterval(-dateReach)...now.addingTimeInterval(dateReach)
    }

    /// Checks seconds against `range`; `field` names the number in the message.
    public static func check(seconds value: Double, _ field: String, in range: ClosedRange<Double>) throws(OutOfBounds) {
        guard value.isFinite, range.contains(value) else {
            throw OutOfBounds(field: field, value: describe(value),
                              expected: "a number of seconds from \(describe(range.lowerBound)) to \(describe(range.upperBound))")
        }
    }

    /// Checks a whole number against `range`.
    public static func check<N: BinaryInteger>(_ value: N, _ field: String, in range: ClosedRange<Int64>, unit: String = "") throws(OutOfBounds) {
        guard let exact = Int64(exactly: value), range.contains(exact) else {
            throw OutOfBounds(field: field, value: "\(value)",
                              expected: "a whole number\(unit) from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    /// Checks that `date` is within ``dateReach`` of `now`.
    public static func check(date: Date, _ field: String, now: Date) throws(OutOfBounds) {
        let offset = date.timeIntervalSince(now)
        guard offset.isFinite, abs(offset) <= dateReach else {
            throw OutOfBounds(field: field, value: SafeNumber.isoText(date),
                              expected: "a date within 10 years of now (\(JSONFormat.string(from: now)))")
        }
    }

    /// Checks that `date` is within `range` (a use: not in the future, not older than a year).
    public static func check(date: Date, _ field: String, in range: ClosedRange<Date>) throws(OutOfBounds) {
        guard date.timeIntervalSince1970.isFinite, range.contains(date) else {
            throw OutOfBounds(field: field, value: SafeNumber.isoText(date),
                              expected: "a date from \(JSONFormat.string(from: range.lowerBound)) to \(JSONFormat.string(from: range.upperBound))")
        }
    }

    /// A number as a person reads it: `60`, `1.5`, `1e+300`, `nan`.
    static func describe(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

/// A number outside its documented range.
public struct OutOfBounds: Error, Equatable, Sendable, CustomStringConvertible {
    /// The option or field, as the reader wrote it (`--resource-timeout`, `timeoutIntervalForResource`).
    public var field: String
    /// The value as given.
    public var value: String
    /// What would have been accepted.
    public var expected: String

    public init(field: String, value: String, expected: String) {
        self.field = field
        self.value = value
        self.expected = expected
    }

    public var description: String { "bad \(field) '\(value)': expected \(expected)" }
}

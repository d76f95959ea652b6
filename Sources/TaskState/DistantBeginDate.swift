import FoundationEssentials

/// An `earliestBeginDate` more than a week ahead: accepted, but the 2019 talk on background
/// execution discourages it (the system forgets and re-learns an app's habits over days; a
/// request placed far ahead is better submitted again closer to the time). `bgctl submit` prints
/// ``warning(identifier:earliest:now:)`` on stderr after `warning: `, the library logs it as a warning.
public enum DistantBeginDate {
    /// A week: dates further ahead get the warning.
    public static let threshold: TimeInterval = 7 * 86_400

    /// The warning for a request whose `earliest` is more than ``threshold`` after `now`, else `nil`.
    public static func warning(identifier: String, earliest: Date?, now: Date) -> String? {
        guard let earliest, earliest.timeIntervalSince(now) > threshold else { return nil }
        let days = Int((earliest.timeIntervalSince(now) / 86_400).rounded(.down))
        return "earliestBeginDate of \(identifier) is \(days) days ahead (\(JSONFormat.string(from: earliest))); "
            + "more than a week ahead is discouraged: submit it again closer to the time"
    }
}

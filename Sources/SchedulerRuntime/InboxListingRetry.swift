import Foundation

/// When the inbox folder cannot be listed (out of descriptors under a flood of clients, out of
/// memory, the folder replaced by something else), its commands wait where they are and the
/// scheduler runs on: the command socket, launches and expiries go on, and the listing is tried
/// again on a timer, since no new file may come to wake the scheduler. The wait doubles from one
/// second up to a minute while the listing keeps failing; nothing is timed while it works.
struct InboxListingRetry {
    static let firstWait: TimeInterval = 1
    static let longestWait: TimeInterval = 60

    /// When to list again, while the listing fails.
    private(set) var nextTry: Date?
    private var wait = Self.firstWait

    /// Notes a failed listing at `now`. Returns whether it is the first of a run of failures
    /// (the one worth an event).
    mutating func failed(at now: Date) -> Bool {
        let first = nextTry == nil
        if first { wait = Self.firstWait } else { wait = min(wait * 2, Self.longestWait) }
        nextTry = now.addingTimeInterval(wait)
        return first
    }

    /// Notes a listing that worked. Returns whether the listing had been failing.
    mutating func succeeded() -> Bool {
        defer { nextTry = nil }
        return nextTry != nil
    }
}

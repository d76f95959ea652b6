import FoundationEssentials

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
    /// (the one worth an event). A failure before the next try is due (a turn something else
    /// woke) keeps the timer as it is: only the timer's own tries lengthen the wait, so a flood
    /// of wakes does not push the next try a minute away.
    mutating func failed(at now: Date) -> Bool {
        guard let due = nextTry else {
            wait = Self.firstWait
            nextTry = now.addingTimeInterval(wait)
            return true
        }
        if now >= due {
            wait = min(wait * 2, Self.longestWait)
            nextTry = now.addingTimeInterval(wait)
        }
        return false
    }

    /// Notes a listing that worked. Returns whether the listing had been failing.
    mutating func succeeded() -> Bool {
        defer { nextTry = nil }
        return nextTry != nil
    }
}

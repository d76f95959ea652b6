import FoundationEssentials
import TaskState

/// Apple's rate limiter for background transfers: a transfer an app creates while the system has
/// launched it in the background does not begin at once, but after a delay that grows with each
/// such launch, and that goes back to 0 when a person opens the app.
///
/// Here the `n`-th launch by the scheduler since a person last used the app (`appUsed` without a
/// launch token) gives a transfer created during it a delay of 0 for `n` = 1, then 60 s, 120 s,
/// 240 s ... doubling, at most ``longestRelaunchDelay``. It is the `relaunchDelay` blocker until
/// ``TransferRecord/relaunchDelayUntil``; `simulate-launch` of the transfer lifts it.
extension SchedulerState {
    /// The first delay that is not 0 (the second background launch's).
    static let firstRelaunchDelay: TimeInterval = 60
    /// The longest relaunch delay: an hour.
    static let longestRelaunchDelay: TimeInterval = 3600

    /// The delay for a transfer created during the `launches`-th background launch since a use.
    public static func relaunchDelay(backgroundLaunches launches: Int) -> TimeInterval {
        guard launches > 1 else { return 0 }
        // 60 · 2^6 is past the cap already; a bounded exponent keeps the arithmetic finite.
        let doublings = min(launches - 2, 6)
        return min(firstRelaunchDelay * Double(1 << doublings), longestRelaunchDelay)
    }

    /// A scheduler launch of `app` that started its process: the next delay grows.
    func noteBackgroundLaunch(of record: inout AppRecord) {
        record.backgroundLaunchesSinceUse = SafeNumber.sum(record.backgroundLaunchesSinceUse ?? 0, 1)
    }

    /// A person used `app`: its transfers created in the background begin at once again.
    mutating func noteUseForRelaunchDelay(app appID: Identifier) {
        var record = app(appID)
        guard (record.backgroundLaunchesSinceUse ?? 0) != 0 else { return }
        record.backgroundLaunchesSinceUse = 0
        setApp(record)
    }

    /// When a transfer `app` creates now may begin, if later than now: only for a transfer created
    /// by a process the scheduler launched (`inBackground`).
    func relaunchDelayEnd(app appID: Identifier, inBackground: Bool, now: Date) -> Date? {
        guard inBackground else { return nil }
        let delay = Self.relaunchDelay(backgroundLaunches: app(appID).backgroundLaunchesSinceUse ?? 0)
        return delay > 0 ? now.addingTimeInterval(delay) : nil
    }

    /// `simulate-launch ID` of a waiting transfer held by the relaunch delay (and no task request
    /// named `ID`): the delay is lifted, as a developer's simulation ignores it. `nil` when it does
    /// not apply, so the command is a task request's simulated launch as before.
    mutating func liftRelaunchDelay(identifier: Identifier, app appID: Identifier?, command: String?, now: Date) -> String? {
        guard !requests.values.contains(where: { $0.identifier == identifier && (appID == nil || $0.app == appID) }) else { return nil }
        let held = transfers.values.filter { record in
            record.identifier == identifier && (appID == nil || record.app == appID) && record.state.isActive
                && (record.relaunchDelayUntil ?? .distantPast) > now
        }
        guard held.count == 1, var record = held.first else { return nil }
        record.relaunchDelayUntil = nil
        record.updatedAt = now
        setTransfer(record)
        // An event like a resume's: the log says why the transfer moved before its time.
        self.record(Event(time: now, type: .transferResumed, app: record.app, identifier: identifier, command: command,
                          reason: "relaunchDelayLifted",
                          message: "\(record.app): relaunch delay of transfer \(identifier) lifted by simulate-launch"))
        return "lifted the relaunch delay of transfer \(identifier) of \(record.app)"
    }
}

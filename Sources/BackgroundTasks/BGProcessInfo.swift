import Dispatch
import Foundation
import Synchronization

/// The process-wide calls Apple puts on `ProcessInfo` for code that is not an app (a library, a
/// command-line tool, an extension): ``performExpiringActivity(withReason:using:)``.
public final class BGProcessInfo: Sendable {
    /// The process information object of this process.
    public static let shared = BGProcessInfo()

    private let application: BGApplication

    init(application: BGApplication = .shared) {
        self.application = application
    }

    /// Performs `block` asynchronously on a concurrent queue while a finishing task (the time of
    /// ``BGApplication/beginBackgroundTask(withName:expirationHandler:)``, `finishingBudgetSeconds`)
    /// keeps the work from being cut off, the way `ProcessInfo.performExpiringActivity` does on
    /// Apple's systems.
    ///
    /// `block` runs with `expired == false` when the time is granted. When the time runs out while
    /// it still runs, `block` is called again, on another thread, with `expired == true`: stop the
    /// work in progress as quickly as possible. The activity ends when the first call returns, or,
    /// if the expired call had begun by then, when that one returns too: the expired call happens
    /// at most once and never begins once the activity has ended.
    /// When no time can be granted (no scheduler running, no manifest), `block` is called once,
    /// with `expired == true`, and the reason is logged.
    ///
    /// - Parameter reason: what the activity does, for the event log and `bgtop`; must not be empty.
    public func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void) {
        DispatchQueue.global().async { self.perform(reason: reason, block: block) }
    }

    private func perform(reason: String, block: @escaping @Sendable (Bool) -> Void) {
        if reason.isEmpty {
            application.scheduler.logger.warning("performExpiringActivity needs a reason; the activity is named by none")
        }
        let activity = ExpiringActivity(block)
        let identifier = application.beginBackgroundTask(withName: reason.isEmpty ? nil : reason) { activity.expire() }
        guard identifier != .invalid else {
            block(true)
            return
        }
        activity.run()
        application.endBackgroundTask(identifier)
    }
}

import Foundation
import Synchronization
import TaskState

/// The app-wide calls that Apple puts on `UIApplication`: extra time to finish what the user
/// started before the app goes away (send a message, close a database), and the handler for
/// background pushes (``registerForRemoteNotifications(didReceiveRemoteNotification:)``).
public final class BGApplication: Sendable {
    /// The application object of this process.
    public static let shared = BGApplication()

    /// Names one finishing task of this process (`UIBackgroundTaskIdentifier`).
    public struct BackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Returned when no time could be granted.
        public static let invalid = BackgroundTaskIdentifier(rawValue: 0)
    }

    private struct Guarded {
        var next = 1
        var identifiers: [Int: Identifier] = [:]
    }

    private let guarded = Mutex<Guarded>(Guarded())
    let scheduler: BGTaskScheduler

    init(scheduler: BGTaskScheduler = .shared) {
        self.scheduler = scheduler
    }

    /// Asks the scheduler for a little time (its `finishingBudgetSeconds`, 30 s by default) to
    /// finish work. Call ``endBackgroundTask(_:)`` when done, also from `expirationHandler`, which
    /// runs shortly before the time is up. Returns ``BackgroundTaskIdentifier/invalid`` when no
    /// time is granted (no scheduler running, no manifest); the reason is logged.
    public func beginBackgroundTask(withName name: String? = nil,
                                    expirationHandler: (@Sendable () -> Void)? = nil) -> BackgroundTaskIdentifier {
        guard let delivery = scheduler.startDelivery(attaching: false) else { return .invalid }
        let connection = SchedulerConnection(context: delivery.context)
        let outcome: CommandOutcome
        do throws(BGTaskScheduler.Error) {
            outcome = try connection.request(.beginFinishing(app: delivery.context.app, name: name, pid: getpid()))
        } catch {
            scheduler.logger.error("no background time granted\(name.map { " for \($0)" } ?? ""): \(error.message)")
            return .invalid
        }
        guard let taskIdentifier = outcome.identifier else { return .invalid }
        delivery.trackFinishing(taskIdentifier.rawValue, handler: expirationHandler)
        return guarded.withLock { state in
            let identifier = BackgroundTaskIdentifier(rawValue: state.next)
            state.next += 1
            state.identifiers[identifier.rawValue] = taskIdentifier
            return identifier
        }
    }

    /// Ends a finishing task begun with ``beginBackgroundTask(withName:expirationHandler:)``.
    /// Ending one twice, or `.invalid`, does nothing.
    public func endBackgroundTask(_ identifier: BackgroundTaskIdentifier) {
        guard let taskIdentifier = guarded.withLock({ $0.identifiers.removeValue(forKey: identifier.rawValue) }),
              let delivery = scheduler.startDelivery(attaching: false) else { return }
        delivery.endFinishing(taskIdentifier)
    }
}

#if canImport(Glibc)
import Glibc
#endif

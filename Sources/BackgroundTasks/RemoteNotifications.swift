import Foundation
import TaskState

extension BGApplication {
    /// How a push handler's fetch went, as Apple's `UIBackgroundFetchResult` (same raw values).
    /// The scheduler records it (`completed` event, `lastPushResult` in `apps/<app>.json`), and an
    /// app that keeps answering ``noData`` gets fewer pushes an hour.
    public enum BackgroundFetchResult: UInt, Sendable, CaseIterable {
        /// New content was fetched.
        case newData = 0
        /// There was nothing new.
        case noData = 1
        /// The fetch did not work.
        case failed = 2

        var fetchResult: FetchResult {
            switch self {
            case .newData: return .newData
            case .noData: return .noData
            case .failed: return .failed
            }
        }
    }

    /// Registers the handler for background pushes: the app delegate's
    /// `application(_:didReceiveRemoteNotification:) async -> UIBackgroundFetchResult`, which
    /// `registerForRemoteNotifications()` enables on Apple's systems. Here both are one call:
    ///
    /// ```swift
    /// BGApplication.shared.registerForRemoteNotifications { userInfo in
    ///     guard let storm = userInfo["storm"] as? [String: Any] else { return .noData }
    ///     return await fetchForecast(for: storm) ? .newData : .noData
    /// }
    /// ```
    ///
    /// `userInfo` is the push's payload, the JSON object decoded (`aps` included): nested objects
    /// are `[String: Any]`, arrays `[Any]`. The handler runs in a `Task` of its own, in a process
    /// the scheduler launched for the push (`BGTASK_LAUNCH_REASON=remoteNotification`) or in the
    /// app's running process, which takes pushes once it has finished launching. Its result is the
    /// answer to the push. It has the budget of an app refresh; when that runs out the `Task` is
    /// cancelled (so `withTaskCancellationHandler` and `Task.isCancelled` work), and the answer is
    /// ``BackgroundFetchResult/failed`` whatever the handler returns after that.
    ///
    /// Register before `BGTaskScheduler.shared.finishLaunching()` (or `runUntilComplete()`), like
    /// the launch handlers. Returns `false`, with the reason logged, after launching has finished,
    /// when the manifest lacks the `remote-notification` background mode, when the app has no
    /// usable manifest, or when a push handler is already registered (the first one stays).
    @discardableResult
    public func registerForRemoteNotifications(
        didReceiveRemoteNotification handler: @escaping @Sendable (_ userInfo: [AnyHashable: Any]) async -> BackgroundFetchResult
    ) -> Bool {
        scheduler.registerPushHandler(handler)
    }
}

extension PushPayload {
    /// The payload as Apple hands it to the app delegate.
    var userInfo: [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for (key, value) in object { result[AnyHashable(key)] = value }
        return result
    }

    /// The payload as `JSONSerialization` reads it: numbers, arrays, objects and `NSNull`, as an
    /// app written for Apple's `userInfo` expects them.
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }
}

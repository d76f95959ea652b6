/// A kind of background task for an `async` launch handler, the way SwiftUI's
/// `.backgroundTask(.appRefresh("id")) { ... }` names it.
public struct BackgroundTask: Hashable, Sendable {
    /// The kind of request the handler serves.
    public enum Kind: Hashable, Sendable {
        case appRefresh, processing, urlSession
    }

    public let identifier: String
    public let kind: Kind

    /// Handles `BGAppRefreshTaskRequest`s with this identifier.
    public static func appRefresh(_ identifier: String) -> BackgroundTask {
        BackgroundTask(identifier: identifier, kind: .appRefresh)
    }

    /// Handles `BGProcessingTaskRequest`s with this identifier.
    public static func processing(_ identifier: String) -> BackgroundTask {
        BackgroundTask(identifier: identifier, kind: .processing)
    }

    /// Runs when the scheduler launches the app to hear how the transfers of the background
    /// session `identifier` ended: create the ``BGURLSession`` with that identifier and await
    /// ``BGURLSession/deliverPendingEvents()`` in it.
    public static func urlSession(_ identifier: String) -> BackgroundTask {
        BackgroundTask(identifier: identifier, kind: .urlSession)
    }

    var taskKind: TaskKind {
        switch kind {
        case .appRefresh: return .appRefresh
        case .processing: return .processing
        case .urlSession: return .urlSession
        }
    }
}

/// How a registered identifier's tasks are run.
enum LaunchHandler: Sendable {
    /// `register(forTaskWithIdentifier:using:launchHandler:)`: the handler gets the task and
    /// completes it itself.
    case callback(queue: DispatchQueue?, handler: @Sendable (BGTask) -> Void)
    /// `register(_:action:)`: the task completes when the closure returns, and expiry cancels it.
    case async(action: @Sendable () async -> Void)
    /// `BGApplication.registerForRemoteNotifications`: runs for every push's task; its answer
    /// completes the task, and expiry cancels it.
    case push(handler: PushHandler)
    /// ``PushRegistry`` with `desiredPushTypes = [.voIP]`: runs for every VoIP push's task; the
    /// task completes when the delegate calls its completion.
    case voip(handler: VoIPHandler)
}

/// What a ``PushRegistry`` registers: gets a VoIP push's payload and a completion to call.
typealias VoIPHandler = @Sendable (_ payload: PushPayload, _ completion: @escaping @Sendable () -> Void) -> Void

/// The closure an app registers for its background pushes.
typealias PushHandler = @Sendable (_ userInfo: [AnyHashable: Any]) async -> BGApplication.BackgroundFetchResult

import Dispatch
import TaskState

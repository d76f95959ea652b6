import Dispatch
import Foundation
import Synchronization
import TaskState

/// VoIP pushes for the app, shaped like PushKit's `PKPushRegistry`:
///
/// ```swift
/// let registry = PushRegistry(queue: .main)
/// registry.delegate = callController
/// registry.desiredPushTypes = [.voIP]
/// BGTaskScheduler.shared.finishLaunching()
/// ```
///
/// A VoIP push (`bgctl push APP --type voip`, or a push server's message with `"type":"voip"`) is
/// delivered at once, outside the push budget, to the app's running process or by launching it
/// (`BGTASK_LAUNCH_REASON=voipPush`). As since iOS 13, the delegate must report an incoming call
/// with ``CallProvider/reportNewIncomingCall(uuid:handle:)`` before it calls `completion`, and
/// within the scheduler's `voipReportSeconds` (5 s by default): an app that does not is killed,
/// and one that fails `voipStrikes` times in a row (3) gets no more VoIP pushes until a person
/// starts it. See `docs/library.md#voip-pushes`.
///
/// Set ``desiredPushTypes`` before `BGTaskScheduler.shared.finishLaunching()` (or
/// `runUntilComplete()`), like the launch handlers; later, or without the manifest's
/// `remote-notification` background mode, the registration is refused and the reason logged.
public final class PushRegistry: Sendable {
    /// A kind of push (`PKPushType`).
    public struct PushType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A VoIP push: an incoming call.
        public static let voIP = PushType(rawValue: TaskState.PushType.voip.rawValue)
    }

    /// A delivered push (`PKPushPayload`).
    public struct Payload: @unchecked Sendable {
        /// The push's JSON object, decoded (`aps` included).
        public let dictionaryPayload: [AnyHashable: Any]
        public let type: PushType
    }

    private struct Guarded {
        weak var delegate: (any PushRegistryDelegate)?
        var desiredPushTypes: Set<PushType>?
        var registered = false
    }

    private let guarded = Mutex<Guarded>(Guarded())
    private let queue: DispatchQueue?
    private let scheduler: BGTaskScheduler

    /// - Parameter queue: where the delegate is called; `nil` means a background queue.
    public convenience init(queue: DispatchQueue?) {
        self.init(queue: queue, scheduler: .shared)
    }

    init(queue: DispatchQueue?, scheduler: BGTaskScheduler) {
        self.queue = queue
        self.scheduler = scheduler
    }

    /// Receives the pushes. Held weakly, as PushKit holds it.
    public var delegate: (any PushRegistryDelegate)? {
        get { guarded.withLock { $0.delegate } }
        set { guarded.withLock { $0.delegate = newValue } }
    }

    /// The pushes the app takes; `[.voIP]` registers for VoIP pushes (once per process).
    public var desiredPushTypes: Set<PushType>? {
        get { guarded.withLock { $0.desiredPushTypes } }
        set {
            let register = guarded.withLock { state -> Bool in
                state.desiredPushTypes = newValue
                defer { if newValue?.contains(.voIP) == true { state.registered = true } }
                return newValue?.contains(.voIP) == true && !state.registered
            }
            if register {
                scheduler.registerVoIPHandler { [weak self] payload, completion in
                    guard let self else {
                        completion()
                        return
                    }
                    self.deliver(payload, completion: completion)
                }
            }
        }
    }

    private func deliver(_ payload: PushPayload, completion: @escaping @Sendable () -> Void) {
        guard let delegate else {
            scheduler.logger.error("a VoIP push arrived but the PushRegistry has no delegate; it cannot report the call")
            completion()
            return
        }
        let push = Payload(dictionaryPayload: payload.userInfo, type: .voIP)
        (queue ?? DispatchQueue.global()).async {
            delegate.pushRegistry(self, didReceiveIncomingPushWith: push, for: .voIP, completion: completion)
        }
    }
}

/// What receives VoIP pushes (`PKPushRegistryDelegate`).
public protocol PushRegistryDelegate: AnyObject, Sendable {
    /// A VoIP push arrived. Report the incoming call (``CallProvider/reportNewIncomingCall(uuid:handle:)``)
    /// before calling `completion`, which ends the push's task.
    func pushRegistry(_ registry: PushRegistry, didReceiveIncomingPushWith payload: PushRegistry.Payload,
                      for type: PushRegistry.PushType, completion: @escaping @Sendable () -> Void)
}

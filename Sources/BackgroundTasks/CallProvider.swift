import Foundation
import TaskState

/// Incoming calls, shaped like CallKit's `CXProvider`: what an app that takes VoIP pushes
/// reports when one arrives.
///
/// ``reportNewIncomingCall(uuid:handle:)`` shows the person a desktop notification
/// (`org.freedesktop.Notifications` on the session bus, `notify-send` where that is missing,
/// the app's log where neither is) and records the report with the scheduler, which is what
/// settles the VoIP push: see ``PushRegistry``.
public final class CallProvider: Sendable {
    /// The provider's settings (`CXProviderConfiguration`).
    public struct Configuration: Sendable {
        /// The name the notification shows as the app's; the app's id when `nil`.
        public var localizedName: String?

        public init(localizedName: String? = nil) {
            self.localizedName = localizedName
        }
    }

    /// Why a call could not be reported, with a readable message.
    public struct Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        public enum Code: Sendable, Equatable {
            /// The handle is empty, too long, or has characters a handle may not have.
            case invalidHandle
            /// This call (its UUID) was reported already.
            case alreadyReported
            /// No scheduler runs, the app has no usable manifest, or the scheduler refused it.
            case unavailable
        }

        public let code: Code
        public let message: String

        public var description: String { message }
    }

    /// How the last call was shown: `dbus`, `notify-send` or `log`.
    public typealias Notifier = String

    public let configuration: Configuration
    private let scheduler: BGTaskScheduler

    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, scheduler: .shared)
    }

    init(configuration: Configuration, scheduler: BGTaskScheduler) {
        self.configuration = configuration
        self.scheduler = scheduler
    }

    /// Reports an incoming call from `handle` (a number, a SIP address, a user name: 1 to 128
    /// letters, digits, spaces and `+ - . _ @ : ( ) # *`): records it with the scheduler, then
    /// shows the notification. Returns how it was shown (`dbus`, `notify-send` or `log`).
    ///
    /// Throws ``Error`` with ``Error/Code/invalidHandle`` for a bad handle (nothing is sent),
    /// ``Error/Code/alreadyReported`` when this UUID was reported before (no second
    /// notification), ``Error/Code/unavailable`` when no scheduler runs. Waits a few seconds at
    /// most.
    @discardableResult
    public func reportNewIncomingCall(uuid: UUID, handle: String) throws(Error) -> Notifier {
        if let problem = CallReport.handleProblem(handle) { throw Error(code: .invalidHandle, message: problem) }
        let context: AppContext
        switch scheduler.resolvedContext() {
        case .success(let found): context = found
        case .failure(let error): throw Error(code: .unavailable, message: error.message)
        }
        let notifier = DesktopNotifier(environment: ProcessInfo.processInfo.environment, logger: scheduler.logger)
        let route = notifier.availableRoute()
        let report = CallReport(app: context.app, uuid: uuid.uuidString, handle: handle, notifier: route.rawValue)
        do throws(BGTaskScheduler.Error) {
            _ = try SchedulerConnection(context: context).request(.reportCall(report))
        } catch {
            let code: Error.Code = error.refusalCode == .alreadyReported ? .alreadyReported : .unavailable
            throw Error(code: code, message: error.message)
        }
        notifier.show(summary: "Incoming call", body: handle, appName: configuration.localizedName ?? context.app.rawValue, by: route)
        return route.rawValue
    }

    /// ``reportNewIncomingCall(uuid:handle:)`` off the caller's thread, as CallKit's
    /// `reportNewIncomingCall(with:update:completion:)`: `completion` gets `nil` or the ``Error``.
    public func reportNewIncomingCall(uuid: UUID, handle: String, completion: @escaping @Sendable ((any Swift.Error)?) -> Void) {
        DispatchQueue.global().async {
            do {
                try self.reportNewIncomingCall(uuid: uuid, handle: handle)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }
}

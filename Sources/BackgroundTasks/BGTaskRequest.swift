import Foundation
import TaskState

/// A request to launch the app in the background. Use one of its subclasses.
public class BGTaskRequest: CustomStringConvertible {
    /// The identifier of the task, one of the manifest's `permittedIdentifiers`.
    public let identifier: String
    /// The earliest date the task may run; `nil` means as soon as conditions allow. A floor,
    /// never a promise.
    public var earliestBeginDate: Date?

    init(identifier: String) {
        self.identifier = identifier
    }

    var kind: TaskKind { .appRefresh }

    public var description: String {
        let date = earliestBeginDate.map { JSONFormat.string(from: $0) } ?? "(none)"
        return "<\(type(of: self)): \(identifier), earliestBeginDate: \(date)>"
    }

    func submission(app: Identifier) throws(BGTaskScheduler.Error) -> SubmitRequest {
        guard let identifier = try? Identifier(validating: identifier) else {
            throw BGTaskScheduler.Error(.notPermitted, "'\(identifier)' is not a valid task identifier (letters, digits, '.', '-', '_')")
        }
        return SubmitRequest(app: app, identifier: identifier, kind: kind, earliestBeginDate: earliestBeginDate)
    }

    /// A copy of a pending request as the scheduler holds it.
    static func copy(of pending: PendingRequest) -> BGTaskRequest {
        switch pending.kind {
        case .processing:
            let request = BGProcessingTaskRequest(identifier: pending.identifier.rawValue)
            request.requiresNetworkConnectivity = pending.requiresNetworkConnectivity
            request.requiresExternalPower = pending.requiresExternalPower
            request.earliestBeginDate = pending.earliestBeginDate
            return request
        case .appRefresh, .finishing, .urlSession, .remoteNotification:
            let request = BGAppRefreshTaskRequest(identifier: pending.identifier.rawValue)
            request.earliestBeginDate = pending.earliestBeginDate
            return request
        }
    }
}

/// A request to refresh the app's content shortly (30 s of runtime), around `earliestBeginDate`.
/// At most one is pending per app; submitting another replaces it if it has the same identifier.
public final class BGAppRefreshTaskRequest: BGTaskRequest {
    public override init(identifier: String) {
        super.init(identifier: identifier)
    }
}

/// A request for deferrable maintenance (minutes of runtime), run when the machine is idle.
/// At most ten are pending per app.
public final class BGProcessingTaskRequest: BGTaskRequest {
    /// Run only while a network is up.
    public var requiresNetworkConnectivity = false
    /// Run only on external power.
    public var requiresExternalPower = false

    public override init(identifier: String) {
        super.init(identifier: identifier)
    }

    override var kind: TaskKind { .processing }

    override func submission(app: Identifier) throws(BGTaskScheduler.Error) -> SubmitRequest {
        var request = try super.submission(app: app)
        request.requiresNetworkConnectivity = requiresNetworkConnectivity
        request.requiresExternalPower = requiresExternalPower
        return request
    }

    public override var description: String {
        String(super.description.dropLast())
            + ", requiresNetworkConnectivity: \(requiresNetworkConnectivity), requiresExternalPower: \(requiresExternalPower)>"
    }
}

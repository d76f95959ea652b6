import FoundationEssentials

/// A command for the scheduler, written into the inbox by `bgctl`, `bgtop` or the app library.
///
/// On disk it is one flat JSON object with a `type` field, so that any program can write one.
public struct Command: Codable, Hashable, Sendable {
    /// Unique per command; the scheduler applies each id once.
    public var id: String
    public var issuedAt: Date
    /// The process that wrote the command, for the event log.
    public var issuerPID: Int32?
    /// The launch token of the process that wrote the command (`BGTASK_LAUNCH_TOKEN`), when it was
    /// launched by the scheduler: the command may then act only on that launch's app. `nil` for a
    /// person's command, which acts as the user. See `docs/security.md`.
    public var launchToken: LaunchToken?
    public var action: CommandAction

    public init(id: String = Command.newID(), issuedAt: Date, issuerPID: Int32? = nil, launchToken: LaunchToken? = nil,
                action: CommandAction) {
        self.id = id
        self.issuedAt = issuedAt
        self.issuerPID = issuerPID
        self.launchToken = launchToken
        self.action = action
    }

    /// A fresh, file-name-safe command id that sorts in the order commands were issued
    /// (nanoseconds since 1970 in hex, then random bits), so the inbox is applied in order.
    public static func newID(at date: Date = Date()) -> String {
        // Clamped: a clock (or a caller) far outside 1970…2554 must not trap here.
        let nanos = UInt64(SafeNumber.int64(min(max(0, date.timeIntervalSince1970), 9e9) * 1_000_000_000))
        let time = String(nanos, radix: 16)
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - time.count) + time + "-"
            + String(repeating: "0", count: 16 - random.count) + random
    }

    /// Whether `text` has the shape of a command id (it becomes a file name).
    public static func isValidID(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && Identifier.isValid(text)
    }

    private struct Wire: Codable {
        var format: Int?
        var id: String
        var issuedAt: Date
        var issuerPID: Int32?
        var launchToken: String?
        var type: CommandAction.Name
        var app: Identifier?
        var identifier: Identifier?
        var kind: TaskKind?
        var earliestBeginDate: Date?
        var requiresNetworkConnectivity: Bool?
        var requiresExternalPower: Bool?
        /// `submit` and `transferCreate`: whether a metered network may be used (absent: the default).
        var allowsExpensiveNetworkAccess: Bool?
        var success: Bool?
        var name: String?
        var pid: Int32?
        var enabled: Bool?
        var overrides: ConditionOverrides?
        var identifiers: [Identifier]?
        var session: String?
        var direction: TransferRecord.Direction?
        var url: String?
        var destination: String?
        var sourceFile: String?
        var isDiscretionary: Bool?
        var sessionSendsLaunchEvents: Bool?
        var countOfBytesClientExpectsToSend: Int64?
        var countOfBytesClientExpectsToReceive: Int64?
        var timeoutIntervalForRequest: Double?
        var timeoutIntervalForResource: Double?
        /// `transferCreate` of a download: the SHA-256 the finished file must have (optional).
        var sha256: String?
        /// `transferCreate`: the HTTP method, the header fields, and the names of further secret headers.
        var method: String?
        var headers: [TransferHeader]?
        var secretHeaders: [String]?
        /// `push`: the payload's JSON text, `apns-priority`, `apns-expiration`, `apns-collapse-id`,
        /// `apns-id` (or the push server's message id) and where it came from.
        var payload: String?
        var priority: Int?
        var expiration: Date?
        var collapseId: String?
        var messageId: String?
        var source: String?
        /// `answerPush`: `newData`, `noData` or `failed`.
        var fetchResult: FetchResult?
        /// `attach`: the process registered a push handler.
        var acceptsPushes: Bool?
        /// `attach`: the process registered for VoIP pushes (a `PushRegistry`).
        var acceptsVoIPPushes: Bool?
        /// `appUsed`: when a person used the app.
        var uses: [Date]?
        /// `push`: `background` (when absent) or `voip`.
        var pushType: String?
        /// `reportCall`: the call's UUID, the caller's handle, and how the app showed the call.
        var callUUID: String?
        var handle: String?
        var notifier: String?
        /// `transferCreate`: the app wants to be asked before a delayed begin.
        var asksBeforeDelayedBegin: Bool?
        /// `transferAnswer`: `continue`, `cancel` or `new` (with `url` and/or `headers`).
        var disposition: DelayedRequestAnswer.Disposition?
    }

    public init(from decoder: any Decoder) throws {
        let wire = try Wire(from: decoder)
        id = wire.id
        issuedAt = wire.issuedAt
        issuerPID = wire.issuerPID
        if let text = wire.launchToken {
            do {
                launchToken = try LaunchToken(validating: text)
            } catch {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: decoder.codingPath + [AnyKey("launchToken")], debugDescription: error.description))
            }
        }
        func need<T>(_ value: T?, _ key: String) throws -> T {
            guard let value else {
                throw DecodingError.keyNotFound(
                    AnyKey(key), .init(codingPath: decoder.codingPath, debugDescription: "\(wire.type.rawValue) needs '\(key)'"))
            }
            return value
        }
        switch wire.type {
        case .submit:
            action = .submit(SubmitRequest(
                app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"),
                kind: try need(wire.kind, "kind"), earliestBeginDate: wire.earliestBeginDate,
                requiresNetworkConnectivity: wire.requiresNetworkConnectivity ?? false,
                requiresExternalPower: wire.requiresExternalPower ?? false,
                allowsExpensiveNetworkAccess: wire.allowsExpensiveNetworkAccess))
        case .cancel:
            action = .cancel(app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"))
        case .cancelAll:
            action = .cancelAll(app: try need(wire.app, "app"))
        case .simulateLaunch:
            action = .simulateLaunch(identifier: try need(wire.identifier, "identifier"), app: wire.app)
        case .simulateExpiration:
            action = .simulateExpiration(identifier: try need(wire.identifier, "identifier"), app: wire.app)
        case .complete:
            action = .complete(app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"),
                               success: try need(wire.success, "success"))
        case .beginFinishing:
            action = .beginFinishing(app: try need(wire.app, "app"), name: wire.name, pid: try need(wire.pid, "pid"))
        case .setAppEnabled:
            action = .setAppEnabled(app: try need(wire.app, "app"), enabled: try need(wire.enabled, "enabled"))
        case .setConditions:
            action = .setConditions(try need(wire.overrides, "overrides"))
        case .clearConditions:
            action = .clearConditions
        case .attach:
            action = .attach(app: try need(wire.app, "app"), pid: try need(wire.pid, "pid"),
                             identifiers: try need(wire.identifiers, "identifiers"), acceptsPushes: wire.acceptsPushes ?? false,
                             acceptsVoIPPushes: wire.acceptsVoIPPushes ?? false)
        case .detach:
            action = .detach(app: try need(wire.app, "app"), pid: try need(wire.pid, "pid"))
        case .transferCreate:
            action = .transferCreate(TransferRequest(
                app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"), session: wire.session,
                direction: try need(wire.direction, "direction"), url: try need(wire.url, "url"),
                destination: wire.destination, sourceFile: wire.sourceFile, earliestBeginDate: wire.earliestBeginDate,
                isDiscretionary: wire.isDiscretionary ?? false, sessionSendsLaunchEvents: wire.sessionSendsLaunchEvents ?? false,
                countOfBytesClientExpectsToSend: wire.countOfBytesClientExpectsToSend,
                countOfBytesClientExpectsToReceive: wire.countOfBytesClientExpectsToReceive,
                timeoutIntervalForRequest: wire.timeoutIntervalForRequest, timeoutIntervalForResource: wire.timeoutIntervalForResource,
                sha256: wire.sha256, method: wire.method, headers: wire.headers, secretHeaderNames: wire.secretHeaders,
                asksBeforeDelayedBegin: wire.asksBeforeDelayedBegin ?? false,
                allowsExpensiveNetworkAccess: wire.allowsExpensiveNetworkAccess))
        case .transferCancel:
            action = .transferCancel(app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"))
        case .transferPause:
            action = .transferPause(app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"))
        case .transferResume:
            action = .transferResume(app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"))
        case .transferAcknowledge:
            action = .transferAcknowledge(app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"))
        case .push:
            let payload: PushPayload
            do {
                payload = try PushPayload(validating: try need(wire.payload, "payload"))
            } catch let error as PushPayloadError {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [AnyKey("payload")], debugDescription: error.description))
            }
            let priority = try wire.priority.map { number in
                guard let known = PushPriority(rawValue: number) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [AnyKey("priority")],
                                                            debugDescription: "priority must be 5 or 10, not \(number)"))
                }
                return known
            } ?? .immediate
            let type: PushType
            do {
                type = try wire.pushType.map { text throws(PushTypeError) in try PushType(validating: text) } ?? .background
            } catch {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [AnyKey("pushType")], debugDescription: error.description))
            }
            action = .push(PushRequest(app: try need(wire.app, "app"), payload: payload, priority: priority,
                                       expiration: wire.expiration, collapseID: wire.collapseId, messageID: wire.messageId,
                                       source: wire.source, type: type))
        case .answerPush:
            action = .answerPush(app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"),
                                 result: try need(wire.fetchResult, "fetchResult"))
        case .appUsed:
            action = .appUsed(app: try need(wire.app, "app"), uses: try need(wire.uses, "uses"))
        case .reportCall:
            // Checked by the scheduler (``CallReport/problem``), which refuses it with the reason.
            action = .reportCall(CallReport(app: try need(wire.app, "app"), uuid: try need(wire.callUUID, "callUUID"),
                                            handle: try need(wire.handle, "handle"), notifier: wire.notifier))
        case .transferAnswer:
            action = .transferAnswer(DelayedRequestAnswer(
                app: try need(wire.app, "app"), identifier: try need(wire.identifier, "identifier"),
                disposition: try need(wire.disposition, "disposition"), url: wire.url, headers: wire.headers,
                secretHeaderNames: wire.secretHeaders))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var wire = Wire(format: JSONFormat.version, id: id, issuedAt: issuedAt, issuerPID: issuerPID,
                        launchToken: launchToken?.text, type: action.name)
        switch action {
        case .submit(let request):
            wire.app = request.app
            wire.identifier = request.identifier
            wire.kind = request.kind
            wire.earliestBeginDate = request.earliestBeginDate
            wire.requiresNetworkConnectivity = request.requiresNetworkConnectivity
            wire.requiresExternalPower = request.requiresExternalPower
            wire.allowsExpensiveNetworkAccess = request.allowsExpensiveNetworkAccess
        case .cancel(let app, let identifier):
            wire.app = app
            wire.identifier = identifier
        case .cancelAll(let app):
            wire.app = app
        case .simulateLaunch(let identifier, let app), .simulateExpiration(let identifier, let app):
            wire.identifier = identifier
            wire.app = app
        case .complete(let app, let identifier, let success):
            wire.app = app
            wire.identifier = identifier
            wire.success = success
        case .beginFinishing(let app, let name, let pid):
            wire.app = app
            wire.name = name
            wire.pid = pid
        case .setAppEnabled(let app, let enabled):
            wire.app = app
            wire.enabled = enabled
        case .setConditions(let overrides):
            wire.overrides = overrides
        case .clearConditions:
            break
        case .attach(let app, let pid, let identifiers, let acceptsPushes, let acceptsVoIPPushes):
            wire.app = app
            wire.pid = pid
            wire.identifiers = identifiers
            wire.acceptsPushes = acceptsPushes ? true : nil
            wire.acceptsVoIPPushes = acceptsVoIPPushes ? true : nil
        case .detach(let app, let pid):
            wire.app = app
            wire.pid = pid
        case .transferCreate(let request):
            wire.app = request.app
            wire.identifier = request.identifier
            wire.session = request.session
            wire.direction = request.direction
            wire.url = request.url
            wire.destination = request.destination
            wire.sourceFile = request.sourceFile
            wire.earliestBeginDate = request.earliestBeginDate
            wire.isDiscretionary = request.isDiscretionary
            wire.sessionSendsLaunchEvents = request.sessionSendsLaunchEvents
            wire.countOfBytesClientExpectsToSend = request.countOfBytesClientExpectsToSend
            wire.countOfBytesClientExpectsToReceive = request.countOfBytesClientExpectsToReceive
            wire.timeoutIntervalForRequest = request.timeoutIntervalForRequest
            wire.timeoutIntervalForResource = request.timeoutIntervalForResource
            wire.sha256 = request.sha256
            wire.method = request.method
            wire.headers = request.headers
            wire.secretHeaders = request.secretHeaderNames
            wire.asksBeforeDelayedBegin = request.asksBeforeDelayedBegin ? true : nil
            wire.allowsExpensiveNetworkAccess = request.allowsExpensiveNetworkAccess
        case .transferCancel(let app, let identifier), .transferPause(let app, let identifier),
             .transferResume(let app, let identifier), .transferAcknowledge(let app, let identifier):
            wire.app = app
            wire.identifier = identifier
        case .push(let request):
            wire.app = request.app
            wire.payload = request.payload.text
            wire.priority = request.priority.rawValue
            wire.expiration = request.expiration
            wire.collapseId = request.collapseID
            wire.messageId = request.messageID
            wire.source = request.source
            wire.pushType = request.type == .background ? nil : request.type.rawValue
        case .answerPush(let app, let identifier, let result):
            wire.app = app
            wire.identifier = identifier
            wire.fetchResult = result
        case .appUsed(let app, let uses):
            wire.app = app
            wire.uses = uses
        case .reportCall(let report):
            wire.app = report.app
            wire.callUUID = report.uuid
            wire.handle = report.handle
            wire.notifier = report.notifier
        case .transferAnswer(let answer):
            wire.app = answer.app
            wire.identifier = answer.identifier
            wire.disposition = answer.disposition
            wire.url = answer.url
            wire.headers = answer.headers
            wire.secretHeaders = answer.secretHeaderNames
        }
        try wire.encode(to: encoder)
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

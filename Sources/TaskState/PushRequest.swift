import FoundationEssentials

/// A background push for an app, as a `push` command carries it (`bgctl push`, a push
/// subscription of the scheduler, or any program writing the inbox).
public struct PushRequest: Hashable, Sendable {
    public var app: Identifier
    public var payload: PushPayload
    public var priority: PushPriority
    /// When the push is no longer worth delivering (`apns-expiration`). `nil`: it is held until
    /// delivered or coalesced. A date at or before the command's `issuedAt` (`--expiration 0`)
    /// means deliver now or drop.
    public var expiration: Date?
    /// `apns-collapse-id`: held pushes with the same one replace each other; without one, an
    /// app's held pushes all do.
    public var collapseID: String?
    /// `apns-id` or the push server's message id: a second push with the same id is a duplicate
    /// and is not delivered again.
    public var messageID: String?
    /// Where it came from: `bgctl`, or the subscription's URL.
    public var source: String?
    /// `background` (the default) or `voip` (``PushType``).
    public var type: PushType

    /// The longest collapse id (APNs: 64 bytes) and message id accepted.
    public static let maximumTagBytes = 64

    public init(app: Identifier, payload: PushPayload = .wakeUp, priority: PushPriority = .immediate,
                expiration: Date? = nil, collapseID: String? = nil, messageID: String? = nil, source: String? = nil,
                type: PushType = .background) {
        self.app = app
        self.type = type
        self.payload = payload
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.messageID = messageID
        self.source = source
    }

    /// The first field that is not acceptable, as one line; `nil` when all are.
    public var problem: String? {
        for (name, value) in [("collapse id", collapseID), ("message id", messageID)] {
            guard let value else { continue }
            if value.isEmpty || value.utf8.count > Self.maximumTagBytes {
                return "\(name) must be 1 to \(Self.maximumTagBytes) bytes, not \(value.utf8.count)"
            }
            if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
                return "\(name) contains a control character"
            }
        }
        if let source {
            if source.utf8.count > 2048 { return "source is longer than 2048 bytes" }
            // It is shown in events, `bgctl` and `bgtop`: no terminal escapes from an inbox writer.
            if source.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
                return "source contains a control character"
            }
        }
        return nil
    }
}

/// A push the scheduler holds because it cannot be delivered yet: `pushes/<app>/<id>.json`.
/// Delivered, it becomes the `push` of the task that carries it.
public struct HeldPush: Codable, Hashable, Sendable {
    public var app: Identifier
    /// `push-<hex>`, made by the scheduler; the identifier of the task that delivers it.
    public var id: Identifier
    public var payload: PushPayload
    public var priority: PushPriority
    public var receivedAt: Date
    public var expiresAt: Date?
    public var collapseID: String?
    public var messageID: String?
    public var source: String?
    /// How many older pushes this one replaced while held.
    public var coalescedCount: Int
    /// The command that brought it.
    public var commandID: String?
    /// `voip` for a VoIP push; `nil` for a background one (as files from before it was known).
    public var pushType: PushType?

    public init(app: Identifier, id: Identifier, payload: PushPayload, priority: PushPriority, receivedAt: Date,
                expiresAt: Date? = nil, collapseID: String? = nil, messageID: String? = nil, source: String? = nil,
                coalescedCount: Int = 0, commandID: String? = nil, type: PushType = .background) {
        self.pushType = type == .background ? nil : type
        self.app = app
        self.id = id
        self.payload = payload
        self.priority = priority
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
        self.collapseID = collapseID
        self.messageID = messageID
        self.source = source
        self.coalescedCount = coalescedCount
        self.commandID = commandID
    }

    public var key: TaskKey { TaskKey(app: app, identifier: id) }

    /// The largest `coalescedCount` kept: the count saturates there.
    public static let maximumCoalescedCount = 1_000_000_000

    /// Spelled as the `push` command and `bgctl list --json` spell them.
    enum CodingKeys: String, CodingKey {
        case app, id, payload, priority, receivedAt, expiresAt, source, coalescedCount, commandID
        case pushType = "type"
        case collapseID = "collapseId", messageID = "messageId"
    }

    /// Checks what a file could get wrong as the `push` command is checked: `pushes/` is input.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        app = try container.decode(Identifier.self, forKey: .app)
        id = try container.decode(Identifier.self, forKey: .id)
        payload = try container.decode(PushPayload.self, forKey: .payload)
        priority = try container.decode(PushPriority.self, forKey: .priority)
        receivedAt = try container.decode(Date.self, forKey: .receivedAt)
        expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)
        collapseID = try container.decodeIfPresent(String.self, forKey: .collapseID)
        messageID = try container.decodeIfPresent(String.self, forKey: .messageID)
        source = try container.decodeIfPresent(String.self, forKey: .source)
        coalescedCount = try container.decodeIfPresent(Int.self, forKey: .coalescedCount) ?? 0
        commandID = try container.decodeIfPresent(String.self, forKey: .commandID)
        pushType = try container.decodeIfPresent(PushType.self, forKey: .pushType)
        guard (0...Self.maximumCoalescedCount).contains(coalescedCount) else {
            throw DecodingError.dataCorruptedError(forKey: .coalescedCount, in: container,
                                                   debugDescription: "coalescedCount must be from 0 to \(Self.maximumCoalescedCount), not \(coalescedCount)")
        }
        if let problem = PushRequest(app: app, payload: payload, collapseID: collapseID, messageID: messageID, source: source).problem {
            // Named by its field, so the error is not taken for unreadable JSON.
            let key: CodingKeys = problem.hasPrefix("collapse id") ? .collapseID : problem.hasPrefix("message id") ? .messageID : .source
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: problem)
        }
    }

    /// Whether it is a VoIP push: delivered at once, never held nor coalesced.
    public var isVoIP: Bool { pushType == .voip }

    /// Held pushes with the same group replace each other.
    public var collapseGroup: String { collapseID ?? "" }

    /// A fresh push identifier.
    public static func newID() -> Identifier {
        try! Identifier(validating: "push-" + String(UInt64.random(in: 0...UInt64.max), radix: 16))
    }
}

/// Why a held push has not been delivered, as `bgctl list` and `bgtop` show it.
public enum PushBlocker: String, Codable, Sendable, CaseIterable {
    /// The app had its pushes for this rolling hour.
    case pushBudget
    /// Priority 5 waits while the machine is in low power mode.
    case lowPower
    /// The app overran its budget recently.
    case throttled
    /// A push of the app is being handled; the next one waits for it.
    case handlingPush
    /// The app's manifest is missing or broken.
    case noManifest

    /// The short words of tables, as for ``Blocker/label``.
    public var label: String {
        switch self {
        case .pushBudget: return "push budget"
        case .lowPower: return Blocker.lowPower.label
        case .throttled: return Blocker.throttled.label
        case .handlingPush: return "busy"
        case .noManifest: return Blocker.noManifest.label
        }
    }
}

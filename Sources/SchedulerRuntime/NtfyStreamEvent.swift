import FoundationEssentials
import TaskState

/// One line of ntfy's JSON stream (`GET <topic>/json`): `open`, `keepalive`, `message` (or an
/// event this client does not use, such as `poll_request`).
struct NtfyStreamEvent: Decodable, Equatable {
    var id: String
    var event: String
    var time: Int?
    var topic: String?
    /// The message body (for `message` events).
    var message: String?
    /// 1–5; ntfy leaves it out for the default, 3.
    var priority: Int?

    /// Why a line is not an ntfy event, as one line.
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// Decodes one line; a line that is not a JSON object with string `id` and `event` is refused.
    init(line: String) throws(Unreadable) {
        do {
            self = try JSONFormat.decode(Self.self, from: Data(line.utf8))
        } catch {
            let shown = line.prefix(40).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : String($0) }.joined()
            throw Unreadable(description: "the server sent a line that is not an ntfy JSON event: '\(shown)\(line.count > 40 ? "…" : "")'")
        }
    }

    init(id: String, event: String, message: String? = nil, priority: Int? = nil) {
        self.id = id
        self.event = event
        self.message = message
        self.priority = priority
    }

    /// The id as events show it: a server's id is not trusted to be short or printable.
    var shownID: String {
        let printable = id.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : String($0) }.joined()
        return printable.count > 64 ? printable.prefix(64) + "…" : printable
    }

    /// `apns-priority` for an ntfy priority: high and urgent (4, 5) deliver at once, the rest
    /// conserve power.
    static func pushPriority(ntfy priority: Int?) -> PushPriority {
        (priority ?? 3) >= 4 ? .immediate : .conserve
    }

    /// The push a `message` event makes for `app`, or why it makes none (one line).
    func push(for app: Identifier, source: String) -> Result<PushRequest, PushRefusal> {
        guard event == "message" else { return .failure(PushRefusal(description: "event '\(event)' carries no message")) }
        guard let message else { return .failure(PushRefusal(description: "message \(shownID) has no body")) }
        let payload: PushPayload
        do {
            payload = try PushPayload(validating: message)
        } catch {
            return .failure(PushRefusal(description: "message \(shownID) is not a push: \(error.description)"))
        }
        // `apns-push-type` travels in the body: `"type": "voip"` makes a VoIP push.
        let type: PushType
        switch payload.fields["type"] {
        case nil: type = .background
        case .string(let text)?:
            do {
                type = try PushType(validating: text)
            } catch {
                return .failure(PushRefusal(description: "message \(shownID) is not a push: \(error.description)"))
            }
        default:
            return .failure(PushRefusal(description: "message \(shownID) is not a push: its \"type\" must be the string background or voip"))
        }
        let request = PushRequest(app: app, payload: payload, priority: Self.pushPriority(ntfy: priority), messageID: id,
                                  source: source, type: type)
        if let problem = request.problem { return .failure(PushRefusal(description: "message \(shownID): \(problem)")) }
        return .success(request)
    }

    /// Why a message is not made into a push.
    struct PushRefusal: Error, CustomStringConvertible {
        var description: String
    }
}

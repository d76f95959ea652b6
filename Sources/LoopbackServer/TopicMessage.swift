import FoundationEssentials
import TaskState

/// One message of a ``PushTopicServer`` topic, as ntfy stores and streams it.
public struct TopicMessage: Hashable, Sendable {
    /// Twelve letters and digits, like ntfy's message ids.
    public var id: String
    /// Unix seconds when it was published.
    public var time: Int
    /// Unix seconds when the server forgets it (ntfy's default cache duration is 12 hours).
    public var expires: Int
    /// The topic it was published on.
    public var topic: String
    /// The body as published.
    public var message: String
    /// 1–5; absent when the publisher gave none (ntfy's default, 3).
    public var priority: Int?

    /// The line of the JSON stream (`GET /<topic>/json`) that carries it, without the newline.
    public var streamLine: String {
        Self.line(StreamEvent(id: id, time: time, expires: expires, event: "message", topic: topic, message: message, priority: priority))
    }

    /// A line for an event without a message (`open`, `keepalive`).
    static func eventLine(_ event: String, topic: String, now: Date) -> String {
        line(StreamEvent(id: newID(), time: Int(now.timeIntervalSince1970), event: event, topic: topic))
    }

    /// One object of ntfy's JSON stream; absent fields are left out, as ntfy leaves them.
    struct StreamEvent: Encodable {
        var id: String
        var time: Int?
        var expires: Int?
        var event: String
        var topic: String
        var message: String?
        var priority: Int?
    }

    static func line(_ event: StreamEvent) -> String {
        let data = (try? JSONFormat.encoder(pretty: false).encode(event)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// A fresh message id.
    static func newID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<12).map { _ in alphabet.randomElement()! })
    }

    /// ntfy's `Priority` header: a number 1–5 or its name; `nil` for anything else.
    static func priority(header: String) -> Int? {
        switch header.trimmed(of: [" ", "\t"]).lowercased() {
        case "1", "min": return 1
        case "2", "low": return 2
        case "3", "default": return 3
        case "4", "high": return 4
        case "5", "max", "urgent": return 5
        default: return nil
        }
    }
}

/// A bad line a ``PushTopicServer`` writes into the open streams of a topic, on request.
public enum LineFault: Hashable, Sendable {
    /// A line that is not JSON.
    case garbage
    /// A line of `bytes` bytes (a valid JSON message, too long for a careful client).
    case huge(bytes: Int)
    /// Half of a message line, then the connection closes.
    case closeMidLine
}

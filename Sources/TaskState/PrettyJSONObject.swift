import FoundationEssentials

/// Writes one JSON object as `JSONFormat.encode` prints it (two spaces a level, `"key" : value`,
/// keys in the order given, which must be sorted), for the files the scheduler writes for every
/// command: a request and an outcome cost it 70 and 47 thousand instructions through `JSONEncoder`.
/// Each type that uses it has a test that its bytes are the encoder's.
public struct PrettyJSONObject {
    private var writer: JSONLineWriter
    /// Members written so far at each open level, the outermost first.
    private var counts: [Int] = [0]

    public init(capacity: Int) { writer = JSONLineWriter(capacity: capacity) }

    private mutating func key(_ name: String) {
        writer.raw(counts[counts.count - 1] == 0 ? "{\n" : ",\n")
        counts[counts.count - 1] += 1
        for _ in counts.indices { writer.raw("  ") }
        // In pieces: an interpolated string for each key cost more than the rest of the object.
        writer.raw("\"")
        writer.raw(name)
        writer.raw("\" : ")
    }

    public mutating func string(_ name: String, _ value: String) {
        key(name)
        writer.string(value)
    }

    public mutating func string(_ name: String, _ value: String?) {
        if let value { string(name, value) }
    }

    public mutating func date(_ name: String, _ value: Date?) {
        if let value { string(name, JSONFormat.string(from: value)) }
    }

    public mutating func bool(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        writer.raw(value ? "true" : "false")
    }

    /// A member whose value is an object, written by `body`.
    public mutating func object(_ name: String, _ body: (inout PrettyJSONObject) -> Void) {
        key(name)
        counts.append(0)
        body(&self)
        close()
    }

    /// Ends the innermost open object (an empty one as the encoder prints it, `{` and two newlines).
    private mutating func close() {
        writer.raw(counts.removeLast() == 0 ? "{\n\n" : "\n")
        for _ in counts.indices { writer.raw("  ") }
        writer.raw("}")
    }

    /// The object's text, ending in a newline as a file's does.
    public consuming func finished() -> Data {
        close()
        writer.raw("\n")
        return Data(writer.bytes)
    }
}

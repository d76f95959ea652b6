extension Event {
    /// The event as a line of `events.jsonl`: the bytes `JSONFormat.encodeLine` makes of it (keys
    /// sorted, `nil` fields left out), written directly.
    ///
    /// The scheduler writes one or more for every command it applies, and through `JSONEncoder` a
    /// line cost it 60 thousand instructions, a tenth of a lone socket command. An event with
    /// ``cpuSeconds`` (a launch's end) is left to the encoder, which owns the text of a `Double`.
    public func jsonLine() throws -> [UInt8] {
        if cpuSeconds != nil { return Array(try JSONFormat.encodeLine(self)) }
        var line = JSONLineWriter(capacity: message.utf8.count + (reason?.utf8.count ?? 0) + 256)
        var separator = "{"
        func key(_ name: String) {
            line.raw(separator)
            line.raw("\"")
            line.raw(name)
            line.raw("\":")
            separator = ","
        }
        if let app { key("app"); line.string(app.rawValue) }
        if let command { key("command"); line.string(command) }
        if let identifier { key("identifier"); line.string(identifier.rawValue) }
        if let kind { key("kind"); line.string(kind.rawValue) }
        if let logOffset { key("logOffset"); line.raw(String(logOffset)) }
        key("message"); line.string(message)
        if let peakMemoryBytes { key("peakMemoryBytes"); line.raw(String(peakMemoryBytes)) }
        if let pid { key("pid"); line.raw(String(pid)) }
        if let reason { key("reason"); line.string(reason) }
        key("time"); line.string(JSONFormat.string(from: time))
        key("type"); line.string(type.rawValue)
        line.raw("}\n")
        return line.bytes
    }
}

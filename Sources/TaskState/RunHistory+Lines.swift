import FoundationEssentials

extension RunHistory {
    /// Applies the complete lines of an event log excerpt, in order. Only lines whose `type` is
    /// one of ``kinds`` are decoded: most of a busy log is submits, transfers and conditions, and
    /// decoding JSON is what hours of history would cost. Unreadable lines are skipped, as
    /// `bgctl events` skips them.
    public mutating func apply(lines data: Data) {
        let decoder = JSONFormat.decoder()
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            let bytes = buffer.bindMemory(to: UInt8.self)
            var start = 0
            while start < bytes.count {
                guard let newline = bytes[start...].firstIndex(of: 0x0A) else { break }
                defer { start = newline + 1 }
                guard newline > start, Self.mayMatter(bytes, from: start, to: newline) else { continue }
                let line = Data(bytes: buffer.baseAddress! + start, count: newline - start)
                if let event = try? JSONFormat.decode(Event.self, from: line, using: decoder) { apply(event) }
            }
        }
    }

    /// `"type":"` spelled as the log writes it (keys sorted, so it is the line's last key).
    private static let typeKey = Array(#""type":""#.utf8)
    private static let kindNames = Set(kinds.map { Array($0.rawValue.utf8) })

    /// Whether the line at `start..<end` may be an event the history takes: its last
    /// `"type":"…"` names one of ``kinds``. A line without one is decoded anyway (the decoder
    /// decides), so a log written with its keys in another order loses nothing.
    static func mayMatter(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Bool {
        let key = typeKey
        var index = end - key.count
        while index >= start {
            if bytes[index] == key[0], (1..<key.count).allSatisfy({ bytes[index + $0] == key[$0] }) {
                let nameStart = index + key.count
                var nameEnd = nameStart
                while nameEnd < end, bytes[nameEnd] != 0x22 { nameEnd += 1 }
                return kindNames.contains(Array(bytes[nameStart..<nameEnd]))
            }
            index -= 1
        }
        return true
    }
}

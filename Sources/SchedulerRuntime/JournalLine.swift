import FoundationEssentials

extension GroupCommit.Batch {
    /// The batch as the journal's record body: one line of JSON, the same object that
    /// `JSONFormat.encodeLine` makes of it (keys sorted), written directly.
    ///
    /// A batch is mostly other files' text, and JSONEncoder spent 10% of the scheduler's time
    /// under a stream of socket commands building and walking a tree of it (1 writer, 16 in
    /// flight). The replay reads it back with `JSONDecoder`, as any JSON.
    func journalLine() -> Data {
        // The strings' exact escaped length (a byte below 0x20 takes up to 6), and room enough for
        // the keys, the punctuation and two numbers.
        let strings = [events] + consumedCommands + removals + (leftovers ?? []) + writes.flatMap { [$0.path, $0.contents] }
        let bound = strings.reduce(0) { $0 + LineWriter.escapedCount($1) } + strings.count * 32 + 256
        let bytes = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            var line = LineWriter(buffer: buffer)
            line.raw(#"{"consumedCommands":"#)
            line.strings(consumedCommands)
            line.raw(#","eventLogOffset":"#)
            line.raw(String(eventLogOffset))
            line.raw(#","events":"#)
            line.string(events)
            line.raw(#","format":"#)
            line.raw(String(format))
            if let leftovers {
                line.raw(#","leftovers":"#)
                line.strings(leftovers)
            }
            line.raw(#","removals":"#)
            line.strings(removals)
            line.raw(#","writes":["#)
            for (index, write) in writes.enumerated() {
                line.raw(index == 0 ? #"{"contents":"# : #",{"contents":"#)
                line.string(write.contents)
                line.raw(#","path":"#)
                line.string(write.path)
                line.raw("}")
            }
            line.raw("]}\n")
            count = line.count
        }
        return Data(bytes)
    }
}

/// Writes JSON text into a buffer sized for it beforehand.
private struct LineWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    var count = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func raw(_ text: String) {
        for byte in text.utf8 { put(byte) }
    }

    mutating func strings(_ list: [String]) {
        put(UInt8(ascii: "["))
        for (index, text) in list.enumerated() {
            if index > 0 { put(UInt8(ascii: ",")) }
            string(text)
        }
        put(UInt8(ascii: "]"))
    }

    /// `text` as a JSON string (RFC 8259 §7): quotation mark, reverse solidus and the control
    /// characters escaped, everything else as its UTF-8.
    mutating func string(_ text: String) {
        put(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): put(UInt8(ascii: "\\")); put(byte)
                case 0x0A: put(UInt8(ascii: "\\")); put(UInt8(ascii: "n"))
                case 0x09: put(UInt8(ascii: "\\")); put(UInt8(ascii: "t"))
                case 0x0D: put(UInt8(ascii: "\\")); put(UInt8(ascii: "r"))
                case 0..<0x20:
                    for escape in #"\u00"#.utf8 { put(escape) }
                    put(Self.hex[Int(byte >> 4)])
                    put(Self.hex[Int(byte & 0x0F)])
                default: put(byte)
                }
            }
        }
        put(UInt8(ascii: "\""))
    }

    /// How many bytes ``string(_:)`` writes for `text`, quotes included.
    static func escapedCount(_ text: String) -> Int {
        text.utf8.reduce(2) { count, byte in
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x09, 0x0D: count + 2
            case 0..<0x20: count + 6
            default: count + 1
            }
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func put(_ byte: UInt8) {
        precondition(count < buffer.count, "a journal line outgrew its bound")
        buffer[count] = byte
        count += 1
    }
}

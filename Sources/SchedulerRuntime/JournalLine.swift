import FoundationEssentials

extension GroupCommit.Batch {
    /// The batch as the journal's record body: one line of JSON, the same object that
    /// `JSONFormat.encodeLine` makes of it (keys sorted), written directly.
    ///
    /// A batch is mostly other files' text, and JSONEncoder spent 10% of the scheduler's time
    /// under a stream of socket commands building and walking a tree of it (1 writer, 16 in
    /// flight). The replay reads it back with `JSONDecoder`, as any JSON.
    func journalLine() -> Data {
        // Room for the strings with a quarter more for their escapes (pretty JSON quotes every
        // key), the keys, the punctuation and two numbers; a line that needs more grows once.
        func size(_ list: [String]) -> Int { list.reduce(0) { $0 + $1.utf8.count + 32 } }
        let text = events.utf8.count + size(consumedCommands) + size(removals) + size(leftovers ?? [])
            + writes.reduce(0) { $0 + $1.path.utf8.count + $1.contents.utf8.count + 64 }
        var line = LineWriter(capacity: text * 5 / 4 + 256)
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
        return Data(line.bytes)
    }
}

/// Writes JSON text into bytes reserved for it beforehand.
private struct LineWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    mutating func strings(_ list: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (index, text) in list.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(text)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `text` as a JSON string (RFC 8259 §7): quotation mark, reverse solidus and the control
    /// characters escaped, everything else as its UTF-8. Runs that need no escape are copied whole:
    /// a batch is mostly file text, and byte by byte it was 4% of a socket command's work.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices where Self.needsEscape(utf8[index]) {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(utf8[index])
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
        case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
        case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
        case 0..<0x20:
            bytes.append(contentsOf: #"\u00"#.utf8)
            bytes.append(Self.hex[Int(byte >> 4)])
            bytes.append(Self.hex[Int(byte & 0x0F)])
        default: bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}

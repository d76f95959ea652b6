import FoundationEssentials
import TaskState

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
        var line = JSONLineWriter(capacity: text * 5 / 4 + 256)
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

/// A line of `bgctl batch` split into arguments as `sh` splits a simple command: words apart at
/// blanks, `'…'` taken as it is, `"…"` with `\"` and `\\` escaped, `\` escaping one character
/// outside quotes. No expansion of any kind.
enum ShellWords {
    struct Unbalanced: Error, CustomStringConvertible {
        var description: String { "a quote is not closed" }
    }

    static func split(_ line: String) throws(Unbalanced) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = line.makeIterator()
        while let character = characters.next() {
            switch character {
            case " ", "\t":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw Unbalanced() }
                    if next == "'" { break }
                    word.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw Unbalanced() }
                    if next == "\"" { break }
                    if next == "\\" {
                        guard let escaped = characters.next() else { throw Unbalanced() }
                        if escaped != "\"" && escaped != "\\" { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
            case "\\":
                inWord = true
                if let escaped = characters.next() { word.append(escaped) }
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        return words
    }
}

/// A line of `bgctl batch` split into arguments as `sh` splits a simple command: words apart at
/// blanks, `'…'` taken as it is, `"…"` with `\"` and `\\` escaped, `\` escaping one character
/// outside quotes. No expansion of any kind.
enum ShellWords {
    struct Unbalanced: Error, CustomStringConvertible {
        var description: String
    }

    /// Scalar by scalar, as `sh` reads bytes: a blank, quote or backslash followed by a combining
    /// mark is still a blank, quote or backslash.
    static func split(_ line: String) throws(Unbalanced) -> [String] {
        var words: [String] = []
        var word = String.UnicodeScalarView()
        var inWord = false
        var characters = line.unicodeScalars.makeIterator()
        while let character = characters.next() {
            switch character {
            case " ", "\t":
                if inWord { words.append(String(word)) }
                word = String.UnicodeScalarView()
                inWord = false
            case "'":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw Unbalanced(description: "a quote is not closed") }
                    if next == "'" { break }
                    word.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw Unbalanced(description: "a quote is not closed") }
                    if next == "\"" { break }
                    if next == "\\" {
                        guard let escaped = characters.next() else { throw Unbalanced(description: "a quote is not closed") }
                        if escaped != "\"" && escaped != "\\" { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
            case "\\":
                inWord = true
                guard let escaped = characters.next() else { throw Unbalanced(description: "the line ends with \\") }
                word.append(escaped)
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(String(word)) }
        return words
    }
}

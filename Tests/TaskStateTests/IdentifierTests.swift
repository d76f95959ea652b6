import Foundation
import Testing
import TaskState

@Suite("Identifier validation")
struct IdentifierTests {
    struct Rejection: Sendable, CustomTestStringConvertible {
        var text: String
        var error: IdentifierError
        var messageFragment: String
        var testDescription: String { "\(text.debugDescription.prefix(40))" }
    }

    static let rejections: [Rejection] = [
        Rejection(text: "../x", error: .leadingDot("../x"), messageFragment: "identifier '../x' starts with '.'"),
        Rejection(text: "/", error: .forbiddenCharacter("/", "'/'"), messageFragment: "contains '/'"),
        Rejection(text: "a/b", error: .forbiddenCharacter("a/b", "'/'"), messageFragment: "identifier 'a/b' contains '/'"),
        Rejection(text: "", error: .empty, messageFragment: "identifier is empty"),
        Rejection(text: "a\u{0}b", error: .forbiddenCharacter("a\u{0}b", "NUL"), messageFragment: "identifier 'a\\0b' contains NUL"),
        Rejection(text: String(repeating: "a", count: 129), error: .tooLong(129),
                  messageFragment: "identifier is 129 bytes long; at most 128 are allowed"),
        Rejection(text: ".hidden", error: .leadingDot(".hidden"), messageFragment: "starts with '.'"),
        Rejection(text: "a b", error: .forbiddenCharacter("a b", "byte 0x20"), messageFragment: "contains byte 0x20"),
        Rejection(text: "caf\u{e9}", error: .forbiddenCharacter("caf\u{e9}", "byte 0xC3"), messageFragment: "contains byte 0xC3"),
        Rejection(text: "x:y", error: .forbiddenCharacter("x:y", "':'"), messageFragment: "contains ':'"),
    ]

    @Test("bad identifiers are refused with a clear message", arguments: rejections)
    func rejected(_ rejection: Rejection) {
        #expect(throws: rejection.error) { try Identifier(validating: rejection.text) }
        #expect(!Identifier.isValid(rejection.text))
        do {
            _ = try Identifier(validating: rejection.text)
            Issue.record("'\(rejection.text)' was accepted")
        } catch {
            #expect(error.description.contains(rejection.messageFragment), "\(error.description)")
        }
    }

    @Test("the allowed alphabet and 128 characters are accepted",
          arguments: ["com.example-app_1.refresh", String(repeating: "z", count: 128), "A", "0", "a.", "x-", "_y"])
    func accepted(_ text: String) throws {
        let identifier = try Identifier(validating: text)
        #expect(identifier.rawValue == text)
        #expect(identifier.description == text)
        #expect(Identifier.isValid(text))
    }

    /// The length limit is in bytes (identifiers are file names); the message must not call a
    /// string of at most 128 characters too long.
    @Test func aLongNonASCIIIdentifierGetsAnHonestMessage() {
        let text = String(repeating: "\u{e9}", count: 100) // 100 characters, 200 bytes
        #expect(!Identifier.isValid(text))
        do {
            _ = try Identifier(validating: text)
        } catch {
            if case .tooLong(let reported) = error {
                #expect(reported > Identifier.maximumLength, "\(error.description)")
            }
        }
    }

    @Test func messagesNameTheRules() {
        let message = IdentifierError.forbiddenCharacter("a*b", "'*'").description
        #expect(message == "identifier 'a*b' contains '*'; only letters, digits, '.', '-' and '_' are allowed")
    }

    @Test func comparesByText() {
        #expect(ident("a.b") < ident("a.c"))
        #expect(!(ident("b") < ident("a")))
        #expect([ident("z"), ident("m"), ident("a")].sorted().map(\.rawValue) == ["a", "m", "z"])
    }

    @Test func codableRoundTripAndValidationOnDecode() throws {
        let data = try JSONFormat.encode([ident("com.example.news")])
        #expect(String(decoding: data, as: UTF8.self).contains("\"com.example.news\""))
        let back = try JSONFormat.decode([Identifier].self, from: data)
        #expect(back == [ident("com.example.news")])

        #expect(throws: StateError.self) { try JSONFormat.decode([Identifier].self, from: Data(#"["../etc"]"#.utf8)) }
        do {
            _ = try JSONFormat.decode([Identifier].self, from: Data(#"["../etc"]"#.utf8))
        } catch {
            #expect(error.description.contains("starts with '.'"), "\(error.description)")
        }
    }

    @Test func taskKeyDescriptionAndOrder() {
        let a = TaskKey(app: ident("com.a"), identifier: ident("z"))
        let b = TaskKey(app: ident("com.b"), identifier: ident("a"))
        #expect(a.description == "com.a/z")
        #expect(a < b)
        #expect(TaskKey(app: ident("com.a"), identifier: ident("a")) < a)
    }
}

import Foundation
import TaskState
import Testing

@Suite("Transfer headers: RFC 9110 §5.1 names, §5.5 values, bounds, methods, secrets")
struct TransferHeaderRulesTests {
    @Test("good fields pass; each broken rule is its own line, without the value")
    func rules() {
        #expect(TransferHeaderRules.problem(headers: [TransferHeader(name: "Authorization", value: "Bearer a.b-c~"),
                                                     TransferHeader(name: "X-Odd!#$%&'*+.^_`|~9", value: "tab\tinside ok")]) == nil)
        let cases: [(TransferHeader, String)] = [
            (TransferHeader(name: "X", value: "a\rb-SECRET"), "line break"),
            (TransferHeader(name: "X", value: "a\nb-SECRET"), "line break"),
            (TransferHeader(name: "X", value: "a\u{0}b-SECRET"), "NUL"),
            (TransferHeader(name: "X", value: "a\u{7}b-SECRET"), "control character"),
            (TransferHeader(name: "X", value: " SECRET"), "starts with a space"),
            (TransferHeader(name: "X", value: String(repeating: "S", count: 100 * 1024)), "at most 8192"),
            (TransferHeader(name: "Bad Name", value: "SECRET"), "not an RFC 9110 token"),
            (TransferHeader(name: "X:Y", value: "SECRET"), "not an RFC 9110 token"),
            (TransferHeader(name: "", value: "SECRET"), "needs a name"),
            (TransferHeader(name: "Ä", value: "SECRET"), "not an RFC 9110 token"),
            (TransferHeader(name: "range", value: "bytes=0-"), "set by the scheduler"),
        ]
        for (header, reason) in cases {
            let problem = TransferHeaderRules.problem(headers: [header])
            #expect(problem?.contains(reason) == true, "\(header.name): \(problem ?? "nil")")
            #expect(problem?.contains("SECRET") == false)
        }
        let many = (0..<65).map { TransferHeader(name: "X-\($0)", value: "1") }
        #expect(TransferHeaderRules.problem(headers: many)?.contains("at most 64") == true)
        let large = (0..<5).map { TransferHeader(name: "X-\($0)", value: String(repeating: "v", count: 8000)) }
        #expect(TransferHeaderRules.problem(headers: large)?.contains("at most 32768") == true)
    }

    @Test("methods per direction; secrets are the three always-secret names and those named, any case")
    func methodsAndSecrets() {
        #expect(TransferHeaderRules.problem(method: "GET", direction: .download) == nil)
        #expect(TransferHeaderRules.problem(method: "POST", direction: .download) == nil)
        #expect(TransferHeaderRules.problem(method: "PUT", direction: .download) != nil)
        #expect(TransferHeaderRules.problem(method: "get", direction: .download) != nil, "methods are case-sensitive (RFC 9110 §9.1)")
        #expect(TransferHeaderRules.problem(method: "PATCH", direction: .upload) == nil)
        #expect(TransferHeaderRules.problem(method: "GET", direction: .upload) != nil)
        let headers = [TransferHeader(name: "cookie", value: "c"), TransferHeader(name: "X-Key", value: "k"),
                       TransferHeader(name: "PROXY-AUTHORIZATION", value: "p"), TransferHeader(name: "X-Trace", value: "t")]
        #expect(TransferHeaderRules.redacted(headers, secretNames: ["x-key"]).map(\.value) == ["redacted", "redacted", "redacted", "t"])
        #expect(TransferHeader(line: "Name:   spaced value \t")?.value == "spaced value")
        #expect(TransferHeader(line: "no colon") == nil)
    }

    @Test("a transferCreate command carries method, headers and secret names through the inbox's JSON")
    func commandRoundTrip() throws {
        let request = TransferRequest(app: try Identifier(validating: "com.example.a"), identifier: try Identifier(validating: "t"),
                                      direction: .upload, url: "http://h/x", sourceFile: "/f", method: "PATCH",
                                      headers: [TransferHeader(name: "Authorization", value: "Bearer z")], secretHeaderNames: ["X-K"])
        let command = Command(issuedAt: Date(timeIntervalSince1970: 1_000), action: .transferCreate(request))
        let decoded = try JSONFormat.decode(Command.self, from: try JSONFormat.encode(command))
        #expect(decoded == command)
    }
}

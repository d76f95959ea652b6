import Foundation
import Testing
import TaskState

/// The request and outcome files the scheduler writes without JSONEncoder
/// (``PendingRequest/fileContents()``, ``CommandOutcome/fileContents()``) must be the very bytes
/// `JSONFormat.encode` makes of the same value, so every reader, diff and test sees one format.
@Suite struct StateFileBytesTests {
    private func expectSame(_ direct: Data, _ encoded: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(direct == encoded, "\(String(decoding: direct, as: UTF8.self))\nvs\n\(String(decoding: encoded, as: UTF8.self))",
                sourceLocation: sourceLocation)
    }

    /// Each optional field present or absent, each Bool both ways, each kind.
    @Test func anyPendingRequestMatchesTheEncoder() throws {
        let app = try Identifier(validating: "com.example.app")
        let identifier = try Identifier(validating: "com.example.app.refresh")
        for mask in 0..<64 {
            func has(_ bit: Int) -> Bool { mask & (1 << bit) != 0 }
            for kind in TaskKind.allCases {
                let request = PendingRequest(app: app, identifier: identifier, kind: kind,
                                             earliestBeginDate: has(0) ? Date(timeIntervalSince1970: 1_796_220_252.5 + Double(mask)) : nil,
                                             requiresNetworkConnectivity: has(1), requiresExternalPower: has(2),
                                             submittedAt: Date(timeIntervalSince1970: -1_000.001 * Double(mask)),
                                             commandID: has(3) ? "18ed74cd7e76b482-951732f207423ea7" : nil,
                                             allowsExpensiveNetworkAccess: has(4) ? has(5) : nil)
                expectSame(request.fileContents(), try JSONFormat.encode(request))
            }
        }
    }

    @Test func anyOutcomeMatchesTheEncoder() throws {
        let identifier = try Identifier(validating: "com.example.app.refresh")
        var text = "a/b \"q\" \\ é 🙂"
        for byte in 0..<0x20 { text.unicodeScalars.append(Unicode.Scalar(UInt8(byte))) }
        for mask in 0..<16 {
            func has(_ bit: Int) -> Bool { mask & (1 << bit) != 0 }
            for type in CommandAction.Name.allCases.map(Optional.some) + [nil] {
                let outcome = CommandOutcome(command: "c-\(mask)", type: type, appliedAt: Date(timeIntervalSince1970: 1_796_220_252.999 + Double(mask)),
                                             message: has(0) ? text : nil,
                                             error: has(1) ? .init(name: "notPermitted", message: has(2) ? text : "") : nil,
                                             identifier: has(3) ? identifier : nil)
                expectSame(outcome.fileContents(), try JSONFormat.encode(outcome))
            }
        }
    }
}

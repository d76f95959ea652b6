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

/// A field added to one of these types must reach its file: with every field of a value set, the
/// direct writer's keys are the type's stored properties, and the text decodes back to the value.
@Suite struct DirectWriterFieldTests {
    private func keys(_ data: some Collection<UInt8>) throws -> Set<String> {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(data)) as? [String: Any])
        return Set(object.keys)
    }

    private func properties(_ value: Any) -> Set<String> {
        Set(Mirror(reflecting: value).children.compactMap(\.label))
    }

    /// Every optional of the value is set (a new optional left `nil` here shows as a property
    /// without its key).
    private func expectEveryPropertySet(_ value: Any, sourceLocation: SourceLocation = #_sourceLocation) {
        for child in Mirror(reflecting: value).children {
            let inner = Mirror(reflecting: child.value)
            #expect(inner.displayStyle != .optional || !inner.children.isEmpty, "\(child.label ?? "?") is nil in the fixture",
                    sourceLocation: sourceLocation)
        }
    }

    @Test func aRequestWritesEveryField() throws {
        let request = PendingRequest(app: try Identifier(validating: "com.example.app"), identifier: try Identifier(validating: "com.example.app.x"),
                                     kind: .processing, earliestBeginDate: Date(timeIntervalSince1970: 1_800_000_000),
                                     requiresNetworkConnectivity: true, requiresExternalPower: true,
                                     submittedAt: Date(timeIntervalSince1970: 1_799_000_000.25), commandID: "c", allowsExpensiveNetworkAccess: false)
        expectEveryPropertySet(request)
        #expect(try keys(request.fileContents()) == properties(request))
        #expect(try JSONFormat.decode(PendingRequest.self, from: request.fileContents()) == request)
    }

    @Test func anOutcomeWritesEveryField() throws {
        let refusal = CommandOutcome.Refusal(name: "notPermitted", message: "no")
        let outcome = CommandOutcome(command: "c", type: .submit, appliedAt: Date(timeIntervalSince1970: 1_800_000_000.5), message: "m",
                                     error: refusal, identifier: try Identifier(validating: "com.example.app.x"))
        expectEveryPropertySet(outcome)
        let object = try #require(try JSONSerialization.jsonObject(with: outcome.fileContents()) as? [String: Any])
        #expect(Set(object.keys) == properties(outcome))
        #expect(Set((object["error"] as? [String: Any] ?? [:]).keys) == properties(refusal))
        #expect(try JSONFormat.decode(CommandOutcome.self, from: outcome.fileContents()) == outcome)
    }

    /// All but `cpuSeconds`, whose events the encoder writes.
    @Test func anEventWritesEveryField() throws {
        let id = try Identifier(validating: "com.example.app")
        let event = Event(time: Date(timeIntervalSince1970: 1_800_000_000.125), type: .launched, app: id, identifier: id, kind: .appRefresh,
                          pid: 7, command: "c", reason: "r", message: "m", logOffset: 9, peakMemoryBytes: 11)
        let line = try event.jsonLine()
        #expect(try keys(line) == properties(event).subtracting(["cpuSeconds"]))
        var withCPU = event
        withCPU.cpuSeconds = 1.5
        expectEveryPropertySet(withCPU)
        #expect(try JSONFormat.decode(Event.self, from: Data(line)) == event)
    }
}

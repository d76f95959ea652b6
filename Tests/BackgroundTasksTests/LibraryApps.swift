import Foundation
import TaskState
import TestSupport

/// Apps written with the BackgroundTasks library, set up in a test environment: the fixture app
/// (one behaviour per mode) and the examples.
extension TestEnvironment {
    static let fixtureID = "com.example.testapp"
    static let refreshID = "com.example.testapp.refresh"

    /// Writes the manifest of a library app whose executable is one of the built products.
    func addLibraryApp(_ id: String, product: String, arguments: [String], identifiers: [String],
                       modes: [String] = ["fetch", "processing"]) throws {
        try writeJSON([
            "id": id, "executable": "\(Self.binaries)/\(product)", "arguments": arguments,
            "permittedIdentifiers": identifiers, "backgroundModes": modes,
        ], to: "\(config)/apps/\(id).json")
    }

    /// The fixture app in `mode`, recording into ``fixtureRecord``; with `pushHandler` it also
    /// registers its push handler (`--push`).
    func addFixture(mode: String, identifiers: [String] = [TestEnvironment.refreshID],
                    permitted: [String]? = nil, modes: [String] = ["fetch", "processing"], pushHandler: Bool = false) throws {
        try addLibraryApp(Self.fixtureID, product: "TaskAppFixture",
                          arguments: [mode, "--record=\(fixtureRecord)", "--ids=\(identifiers.joined(separator: ","))"]
                              + (pushHandler ? ["--push"] : []),
                          identifiers: permitted ?? identifiers, modes: modes)
    }

    var fixtureRecord: String { "\(root)/fixture.jsonl" }

    /// Submits the fixture's refresh for later, launches it now with `simulate-launch`, and waits
    /// for its handler to start.
    func launchFixtureTask() throws {
        let submitted = try bgctl("submit", "--app", Self.fixtureID, "--id", Self.refreshID, "--kind", "refresh", "--earliest", "+3600")
        guard submitted.status == 0 else { throw TestFailure("submit failed: \(submitted)") }
        let launched = try bgctl("simulate-launch", Self.refreshID)
        guard launched.status == 0 else { throw TestFailure("simulate-launch failed: \(launched)") }
        try waitUntil("the handler to start") { !fixtureEvents("started").isEmpty }
    }

    /// The environment a program started by hand (not by the scheduler) gets.
    var appEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["BGTASK_STATE_DIR"] = state
        environment["BGTASK_CONFIG_DIR"] = config
        environment["BGTASK_APP_ID"] = nil
        return environment
    }

    /// Runs the fixture by hand as `app` with `arguments`.
    func runFixture(_ arguments: [String], app: String = TestEnvironment.fixtureID,
                    environment extra: [String: String] = [:]) throws -> Result {
        var environment = appEnvironment
        environment["BGTASK_APP_ID"] = app
        for (key, value) in extra { environment[key] = value }
        return try run(Self.binaries + "/TaskAppFixture", arguments + ["--record=\(fixtureRecord)"], environment: environment)
    }

    /// What the fixture recorded, oldest first.
    func fixtureEvents() -> [FixtureEvent] {
        guard let text = try? String(contentsOfFile: fixtureRecord, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            try? JSONDecoder().decode(FixtureEvent.self, from: Data(line.utf8))
        }
    }

    func fixtureEvents(_ name: String) -> [FixtureEvent] { fixtureEvents().filter { $0.event == name } }

    /// The text the launched app wrote to stdout and stderr.
    func appLog(_ app: String) -> String {
        (try? String(contentsOfFile: "\(state)/logs/\(app).log", encoding: .utf8)) ?? ""
    }
}

/// One line of the fixture's record.
struct FixtureEvent: Decodable, Equatable {
    var event: String
    var identifier: String
    var pid: Int32
    var time: Double
    var detail: String
    /// `BGTASK_LAUNCH_REASON` of the process that recorded it, when the scheduler launched it.
    var launchReason: String?
}

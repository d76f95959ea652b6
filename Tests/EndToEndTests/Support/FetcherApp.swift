import Foundation
import TaskState
import TestSupport

/// The app the transfer tests download and upload for, and how they read what the scheduler
/// recorded for its transfers.
struct FetcherApp {
    static let id = "com.example.fetcher"

    let env: TestEnvironment

    /// Adds the app's manifest (and `settings`, when given) to the environment's config.
    init(_ env: TestEnvironment, settings: [String: Any] = [:]) throws {
        self.env = env
        try env.addApp(Self.id, identifiers: ["com.example.fetcher.refresh"], script: "exit 0")
        if !settings.isEmpty { try env.writeSettings(settings) }
    }

    func key(_ id: String) -> TaskKey {
        TaskKey(app: try! Identifier(validating: Self.id), identifier: try! Identifier(validating: id))
    }

    /// The transfer's record as a reader sees it (the newer of the record and its progress copy).
    func transfer(_ id: String) -> TransferRecord? {
        guard let record = (try? StateFiles.read(env.paths.transfer(key(id))))
            .flatMap({ try? JSONFormat.decode(TransferRecord.self, from: $0) }) else { return nil }
        return TransferRecord.newest(record, progressFile: env.paths.transferProgress(record.key))
    }

    /// `bgctl transfer download` of `url` to `<id>.bin`, with `extra` arguments.
    @discardableResult
    func download(_ id: String, _ url: String, _ extra: String...) throws -> TestEnvironment.Result {
        try env.run(TestEnvironment.binaries + "/bgctl",
                    ["transfer", "download", "--app", Self.id, "--id", id, url, "--to", "\(id).bin"] + extra
                        + ["--state", env.state, "--config", env.config])
    }

    /// The finished file of the download `id`, if there is one.
    func downloaded(_ id: String) -> Data? {
        FileManager.default.contents(atPath: "\(env.state)/downloads/\(Self.id)/\(id).bin")
    }
}

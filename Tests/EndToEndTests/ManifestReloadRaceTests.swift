import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Manifests come and go while the scheduler reloads them (each change wakes it through
/// inotify): one removed between the listing and its read is gone, not a `manifestError`.
/// A hunt kept as a test: many manifests, so each reload has many reads in which a removal can
/// land, and removals made one by one while those reloads run.
@Suite struct ManifestReloadRaceTests {
    @Test func aManifestRemovedDuringAReloadIsARemovalNotAnError() throws {
        let env = try TestEnvironment()
        let executable = env.root + "/app.sh"
        try "#!/bin/sh\nexit 0\n".write(toFile: executable, atomically: true, encoding: .utf8)
        chmod(executable, 0o755)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let apps = env.config + "/apps"
        let count = 150
        func ids(_ round: Int) -> [String] { (0..<count).map { "com.example.churn\(round).app\($0)" } }
        for round in 0..<6 {
            for id in ids(round) {
                // Written whole (a hidden temporary renamed into place), as an editor or installer does:
                // what is hunted is a removal, not a half-written file.
                let manifest: [String: Any] = ["id": id, "executable": executable, "permittedIdentifiers": ["\(id).refresh"],
                                               "backgroundModes": ["fetch"]]
                try env.writeJSON(manifest, to: "\(apps)/.\(id).tmp")
                #expect(rename("\(apps)/.\(id).tmp", "\(apps)/\(id).json") == 0)
            }
            for id in ids(round) { #expect(unlink("\(apps)/\(id).json") == 0) }
        }

        // The scheduler has caught up once it has loaded a manifest written after all of that.
        try env.addApp("com.example.last", identifiers: ["com.example.last.refresh"], script: "exit 0\n")
        try env.waitUntil("the scheduler to load the last manifest", timeout: 30) {
            env.events(.manifestLoaded).contains { $0.app?.rawValue == "com.example.last" }
        }
        #expect(daemon.isRunning)
        let loaded = env.events(.manifestLoaded).filter { $0.app?.rawValue.hasPrefix("com.example.churn") == true }
        #expect(!loaded.isEmpty, "the reloads ran while manifests came and went")
        let errors = env.events(.manifestError)
        #expect(errors.isEmpty, "\(errors.count) manifest errors, first: \(errors.first?.message ?? "")")
        // What is left is one good manifest and no problem.
        let report = try env.bgctl("apps", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        #expect((object?["manifestErrors"] as? [Any])?.isEmpty == true, "\(report)")
    }
}

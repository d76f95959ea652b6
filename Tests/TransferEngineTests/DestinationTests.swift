import Foundation
import LoopbackServer
import TaskState
import Testing
import TransferEngine

@Suite("Download destinations stay inside the app's folder")
struct DestinationTests {
    @Test("a relative destination in new subfolders is created inside the app folder")
    func nestedDestination() async throws {
        try await withFixture { fixture in
            let events = try await runAttempt(fixture.engine, fixture.download("nested", "/generated/5000", to: "media/2026/nested.bin"))
            #expect(events.final == .completed(statusCode: 200))
            #expect(try await matchesGenerated(fixture.appFolder + "/media/2026/nested.bin", GeneratedBytes(size: 5000)))
        }
    }

    @Test("an absolute destination inside the app folder is accepted")
    func absoluteInside() async throws {
        try await withFixture { fixture in
            let events = try await runAttempt(fixture.engine, fixture.download("abs", "/generated/5000", to: fixture.appFolder + "/abs.bin"))
            #expect(events.final == .completed(statusCode: 200))
            #expect(fileSize(fixture.appFolder + "/abs.bin") == 5000)
        }
    }

    @Test("'..', an absolute path elsewhere, and symlinks pointing out are refused; nothing is written outside")
    func escapesRefused() async throws {
        try await withFixture { fixture in
            let outside = fixture.root + "/outside"
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: fixture.appFolder + "/linked-folder", withDestinationPath: outside)
            try FileManager.default.createSymbolicLink(atPath: fixture.appFolder + "/linked-file", withDestinationPath: outside + "/target")
            let attempts = [
                "../escape.bin",
                "sub/../../escape.bin",
                outside + "/escape.bin",
                "/tmp/escape-\(UUID().uuidString).bin",
                "linked-folder/escape.bin",
                "linked-file",
                // A "/" that a combining mark follows is no "/" to String: split as text, these
                // were plain names, and the kernel climbed to the app folder's parent.
                "../\u{301}escape.bin",
                "sub/../\u{301}/../\u{301}escape.bin",
            ]
            for destination in attempts {
                let job = fixture.download("escape", "/generated/1000", to: destination)
                #expect(throws: TransferFailure.destinationOutsideAppFolder(destination)) { try job.validate() }
                let events = try await runAttempt(fixture.engine, job)
                #expect(events.final == .failed(.destinationOutsideAppFolder(destination)), "\(destination)")
                #expect(!fileExists(destination) || !destination.hasPrefix("/"))
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
            #expect(!fileExists(fixture.root + "/apps/escape.bin"))
            #expect(!fileExists(fixture.root + "/escape.bin"))
            #expect(!fileExists(PathText.parent(fixture.appFolder) + "/\u{301}escape.bin"))
            #expect(!fileExists(PathText.parent(fixture.appFolder) + "/\u{301}"))
            // Refused before any request reached the network.
            #expect(fixture.server.requests.isEmpty)
        }
    }

    @Test("a symlink that stays inside the app folder is followed")
    func symlinkInside() async throws {
        try await withFixture { fixture in
            try FileManager.default.createDirectory(atPath: fixture.appFolder + "/real", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: fixture.appFolder + "/alias", withDestinationPath: fixture.appFolder + "/real")
            let events = try await runAttempt(fixture.engine, fixture.download("alias", "/generated/3000", to: "alias/file.bin"))
            #expect(events.final == .completed(statusCode: 200))
            #expect(fileSize(fixture.appFolder + "/real/file.bin") == 3000)
        }
    }

    @Test("a destination that is a folder is refused as unusable")
    func destinationIsFolder() async throws {
        try await withFixture { fixture in
            try FileManager.default.createDirectory(atPath: fixture.appFolder + "/taken", withIntermediateDirectories: true)
            let events = try await runAttempt(fixture.engine, fixture.download("taken", "/generated/3000", to: "taken"))
            guard case .failed(let failure) = events.final else {
                Issue.record("expected a failure, got \(String(describing: events.final))")
                return
            }
            #expect(failure.name == "destinationUnusable")
            #expect(!failure.isTransient)
        }
    }
}

import Foundation
import TaskState
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A scheduler whose inbox cannot be listed (out of descriptors under a flood of clients, out of
/// memory, `inbox/new` replaced) stops nothing: the command socket and everything else go on, the
/// inbox's commands wait where they are, and a timer lists the inbox again, since no file event
/// may come to wake the scheduler once it can be read.
@Suite struct InboxListingTests {
    static let app = "com.example.listing"

    @Test func anInboxThatCannotBeListedHoldsItsCommandsWhileTheSchedulerRunsOn() async throws {
        let env = try TestEnvironment()
        let daemon = try Self.startScheduler(env)
        defer { daemon.stop() }
        // `inbox/new` becomes a plain file; the folder, under another name, is still the one the
        // scheduler watches (a watch follows the folder, not its name).
        let away = env.paths.inboxNew + ".away"
        #expect(rename(env.paths.inboxNew, away) == 0)
        #expect(FileManager.default.createFile(atPath: env.paths.inboxNew, contents: Data()))

        // A command over the socket makes a turn, which cannot list the inbox: applied all the same.
        let submitted = try env.bgctl("submit", "--app", Self.app, "--id", "\(Self.app).refresh", "--kind", "refresh",
                                      "--earliest", "+3600")
        #expect(submitted.status == 0, "\(submitted)")
        try await env.eventually("the inboxUnreadable event") { !env.events(.inboxUnreadable).isEmpty }
        let event = try #require(env.events(.inboxUnreadable).first)
        #expect(event.reason?.contains("directory") == true || event.reason?.contains("Not a") == true, "\(event)")
        #expect(daemon.isRunning, "\(daemon.log)")

        // A command a client leaves in the inbox meanwhile (the refresh moved to 2030): its file
        // event wakes the scheduler, which still cannot list the inbox.
        let id = try leave(env, earliest: "2030-01-01T00:00:00Z", in: away)
        // Long enough for the scheduler to take that event and fail to list again.
        try await Task.sleep(for: .milliseconds(300))
        #expect(!StateFiles.exists(env.paths.outcome(id)), "not applied while the inbox cannot be listed")

        // The folder back under its name: no file event comes any more; the retry lists it.
        #expect(unlink(env.paths.inboxNew) == 0 && rename(away, env.paths.inboxNew) == 0)
        try await env.eventually("the waiting command to be applied", timeout: 120) { StateFiles.exists(env.paths.outcome(id)) }
        let outcome = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id)))
        #expect(outcome.error == nil, "\(outcome)")
        let requests = try env.requests()
        #expect(requests.count == 1 && (requests.first?["earliestBeginDate"] as? String)?.hasPrefix("2030-01-01") == true, "\(requests)")
        #expect(env.events(.inboxUnreadable).count == 1, "one event for the run of failures")
        #expect(daemon.isRunning, "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }

    /// The folder removed and made again: the new one is listed by the retry and watched from
    /// then on, so a later command is applied at once (no timer runs once the listing works).
    @Test func aNewInboxFolderIsListedAndWatched() async throws {
        let env = try TestEnvironment()
        let daemon = try Self.startScheduler(env)
        defer { daemon.stop() }
        #expect(rmdir(env.paths.inboxNew) == 0)
        #expect(FileManager.default.createFile(atPath: env.paths.inboxNew, contents: Data()))
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", "\(Self.app).refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        try await env.eventually("the inboxUnreadable event") { !env.events(.inboxUnreadable).isEmpty }

        #expect(unlink(env.paths.inboxNew) == 0 && mkdir(env.paths.inboxNew, 0o700) == 0)
        let first = try leave(env, earliest: "2030-01-01T00:00:00Z")
        try await env.eventually("the command in the new folder to be applied", timeout: 120) { StateFiles.exists(env.paths.outcome(first)) }
        // Listed and watched again: the next command, left once the scheduler has gone quiet
        // (its checkpoint 50 ms after a commit), is taken on its file event, well before anything
        // else would wake the scheduler.
        try await Task.sleep(for: .seconds(1))
        let second = try leave(env, earliest: "2031-01-01T00:00:00Z")
        try await env.eventually("the next command to be applied", timeout: 20) { StateFiles.exists(env.paths.outcome(second)) }
        let requests = try env.requests()
        #expect((requests.first?["earliestBeginDate"] as? String)?.hasPrefix("2031-01-01") == true, "\(requests)")
        #expect(daemon.stop() == 0)
    }

    /// A turn skips listing an inbox it listed whole when nothing changed since; it must not skip
    /// one whose folder was replaced, which its watch (on the old folder) says nothing about. Here
    /// `inbox/new` is moved away (or its parent renamed) and made again, a command is left in the
    /// new folder, and a socket command makes a turn: that turn lists the new folder.
    @Test(arguments: ["new", "parent"])
    func aReplacedInboxFolderIsListedOnTheNextTurn(moved: String) async throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: ["\(Self.app).refresh", "\(Self.app).other"], script: "exit 0\n")
        try env.writeSettings(["conditionsRecheckSeconds": 86400])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // Listed whole at least once since the start, with no change after it.
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", "\(Self.app).other", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        let inbox = StateFiles.directoryName(of: env.paths.inboxNew)
        if moved == "new" {
            #expect(rename(env.paths.inboxNew, env.paths.inboxNew + ".away") == 0)
        } else {
            #expect(rename(inbox, inbox + ".away") == 0)
            #expect(mkdir(inbox, 0o700) == 0)
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(mkdir(env.paths.inboxNew, 0o700) == 0)
        let id = try leave(env, earliest: "2030-01-01T00:00:00Z")
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", "\(Self.app).other", "--kind", "refresh",
                              "--earliest", "+7200").status == 0)
        try await env.eventually("the command in the new folder to be applied", timeout: 10) { StateFiles.exists(env.paths.outcome(id)) }
        // And the new folder is watched from then on: a command left in it is taken on its file event.
        let next = try leave(env, earliest: "2031-01-01T00:00:00Z")
        try await env.eventually("the next command to be applied", timeout: 10) { StateFiles.exists(env.paths.outcome(next)) }
        #expect(daemon.stop() == 0)
    }

    /// The app and a scheduler that nothing else wakes on a timer (app refreshes wait on no
    /// condition, and no probe is due): only the inbox's retry can find a command left in it.
    private static func startScheduler(_ env: TestEnvironment) throws -> DaemonProcess {
        try env.addApp(app, identifiers: ["\(app).refresh"], script: "exit 0\n")
        try env.writeSettings(["conditionsRecheckSeconds": 86400])
        return try env.startDaemon()
    }

    /// Leaves a submit of the app's refresh at `earliest` in `folder` (`inbox/new` when nil) as
    /// a client does; returns its command id.
    private func leave(_ env: TestEnvironment, earliest: String, in folder: String? = nil) throws -> String {
        let id = Command.newID()
        let command = """
            {"id":"\(id)","issuedAt":"\(JSONFormat.string(from: Date()))","type":"submit","app":"\(Self.app)",\
            "identifier":"\(Self.app).refresh","kind":"appRefresh","earliestBeginDate":"\(earliest)"}
            """
        try FileManager.default.createDirectory(atPath: env.paths.inboxTemporary, withIntermediateDirectories: true)
        try Data(command.utf8).write(to: URL(fileURLWithPath: "\(env.paths.inboxTemporary)/\(id).json"))
        #expect(rename("\(env.paths.inboxTemporary)/\(id).json", "\(folder ?? env.paths.inboxNew)/\(id).json") == 0)
        return id
    }
}

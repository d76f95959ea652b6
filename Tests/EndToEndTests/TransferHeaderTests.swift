import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Requests with headers, carried by the real `bgtaskd` against loopback servers: sent on every
/// attempt and resume, never shown, dropped on a redirect to another origin, refused when malformed.
@Suite struct TransferHeaderTests {
    static let bearer = "Bearer s3cr3t-token-A"
    static let apiKey = "key-B-sekrit"
    static let secrets = [bearer, "s3cr3t-token-A", apiKey]

    private func download(_ env: TestEnvironment, _ id: String, _ url: String, _ extra: [String]) throws -> TestEnvironment.Result {
        try env.run(TestEnvironment.binaries + "/bgctl",
                    ["transfer", "download", "--app", FetcherApp.id, "--id", id, url, "--to", "\(id).bin"] + extra
                        + ["--state", env.state, "--config", env.config])
    }

    private let headerArguments = ["--header", "Authorization: \(bearer)", "--header", "X-Api-Key: \(apiKey)",
                                    "--secret-header", "x-api-key", "--header", "X-Trace: visible-1"]

    /// Every file under `folder` (and the event log) that mentions one of the secrets.
    private func filesMentioningSecrets(_ env: TestEnvironment) -> [String] {
        var paths = [env.paths.events]
        if let logs = FileManager.default.enumerator(atPath: env.paths.logs) {
            paths += logs.compactMap { $0 as? String }.map { "\(env.paths.logs)/\($0)" }
        }
        return paths.filter { path in
            guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else { return false }
            return Self.secrets.contains { text.contains($0) }
        }
    }

    @Test func headersGoOutOnTheFirstAttemptAndOnTheResumeAndAreNeverShown() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let size: Int64 = 200_000
        let server = try await LoopbackServer.start(routes: [
            // The first response breaks off after a quarter: the second attempt resumes with Range.
            "/secret": Route(.generated(size: size, seed: 41), faults: Faults(), nextRequests: [Faults(dropAfter: size / 4)]),
        ])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let created = try download(env, "secret", server.url("/secret"), headerArguments)
        #expect(created.status == 0, "\(created)")
        try await env.eventually("the download to finish", timeout: 30) { fetcher.transfer("secret")?.state == .completed }
        #expect(fetcher.downloaded("secret") == Data(GeneratedBytes(size: size, seed: 41).bytes(0..<size)))

        let requests = server.requests(for: "/secret")
        #expect(requests.count >= 2, "\(requests.map(\.range))")
        #expect(requests.contains { ($0.range ?? "bytes=0-") != "bytes=0-" && $0.status == 206 }, "a resume: \(requests.map(\.range))")
        for request in requests {
            #expect(request.values("Authorization") == [Self.bearer])
            #expect(request.values("X-Api-Key") == [Self.apiKey])
            #expect(request.values("X-Trace") == ["visible-1"])
        }

        // bgctl list --json shows the names, the visible value, and `redacted` for the secrets.
        let listed = try env.bgctl("list", "--json")
        #expect(listed.status == 0)
        #expect(!Self.secrets.contains { listed.stdout.contains($0) }, "no secret in bgctl list --json")
        let transfer = try #require((try env.list()["transfers"] as? [[String: Any]])?.first)
        let headers = try #require(transfer["headers"] as? [[String: String]])
        #expect(headers == [["name": "Authorization", "value": "redacted"], ["name": "X-Api-Key", "value": "redacted"],
                            ["name": "X-Trace", "value": "visible-1"]])
        let plain = try env.bgctl("list")
        #expect(plain.status == 0 && !Self.secrets.contains { plain.stdout.contains($0) })
        let batch = try env.run(TestEnvironment.binaries + "/bgtop", ["--batch", "--state", env.state, "--config", env.config])
        #expect(batch.status == 0 && batch.stdout.contains("secret"), "\(batch)")
        #expect(!Self.secrets.contains { batch.stdout.contains($0) || batch.stderr.contains($0) }, "no secret in bgtop --batch")
        // The feed a remote bgtop reads (stdin closed: the snapshot line, then the end).
        let watched = try env.run(TestEnvironment.binaries + "/bgctl", ["watch", "--json", "--state", env.state, "--config", env.config])
        #expect(watched.stdout.contains("\"transfers\"") && watched.stdout.contains("redacted"), "\(watched)")
        #expect(!Self.secrets.contains { watched.stdout.contains($0) || watched.stderr.contains($0) }, "no secret in bgctl watch --json")
        #expect(!env.events().isEmpty)
        #expect(filesMentioningSecrets(env).isEmpty, "no secret in events.jsonl or logs: \(filesMentioningSecrets(env))")

        // Where it lives: the record, mode 0600.
        var status = stat()
        #expect(stat(env.paths.transfer(fetcher.key("secret")), &status) == 0)
        #expect(status.st_mode & 0o077 == 0, "the record holding the secret is private to its owner")
        await server.shutdown()
    }

    @Test func aRedirectToAnotherOriginDropsTheSecretHeadersAndASameOriginOneKeepsThem() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let other = try await LoopbackServer.start()
        let server = try await LoopbackServer.start(routes: [
            "/away": Route(.redirect(status: 302, location: other.url("/generated/3000?seed=42"))),
            "/here": Route(.redirect(status: 307, location: "/generated/3000?seed=43")),
        ])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try download(env, "away", server.url("/away"), headerArguments).status == 0)
        #expect(try download(env, "here", server.url("/here"), headerArguments).status == 0)
        try await env.eventually("both to finish", timeout: 20) {
            fetcher.transfer("away")?.state == .completed && fetcher.transfer("here")?.state == .completed
        }
        let first = try #require(server.requests(for: "/away").first)
        #expect(first.values("Authorization") == [Self.bearer], "the origin asked for gets the credentials")
        let moved = try #require(other.requests.first { $0.target.hasPrefix("/generated/3000") })
        #expect(moved.values("Authorization").isEmpty && moved.values("X-Api-Key").isEmpty, "\(moved.headers)")
        #expect(moved.values("X-Trace") == ["visible-1"], "headers that are not secrets go along")
        let stayed = try #require(server.requests.first { $0.target.hasPrefix("/generated/3000") })
        #expect(stayed.values("Authorization") == [Self.bearer] && stayed.values("X-Api-Key") == [Self.apiKey])
        await other.shutdown()
        await server.shutdown()
    }

    @Test func anUploadUsesItsMethodAndHeadersAndItsOwnContentType() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let source = "\(env.state)/../note.txt"
        try Data("a note to send".utf8).write(to: URL(fileURLWithPath: source))
        let result = try env.bgctl("transfer", "upload", "--app", FetcherApp.id, "--id", "note", "--method", "PATCH",
                                   "--header", "Authorization: \(Self.bearer)", "--header", "Content-Type: text/plain",
                                   server.url("/notes/1"), source)
        #expect(result.status == 0, "\(result)")
        try await env.eventually("the upload") { fetcher.transfer("note")?.state == .completed }
        let request = try #require(server.requests(for: "/notes/1").first)
        #expect(request.method == "PATCH" && request.bodyBytes == 14)
        #expect(request.values("Authorization") == [Self.bearer])
        #expect(request.values("Content-Type") == ["text/plain"], "the request's own type, not a second one")
        #expect(fetcher.transfer("note")?.method == "PATCH")
        #expect(try env.bgctl("transfer", "upload", "--app", FetcherApp.id, "--id", "bad", "--method", "GET",
                              server.url("/notes/2"), source).status == 2)
        await server.shutdown()
    }

    @Test func aDownloadByPostResumesByPostWithItsHeaders() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let size: Int64 = 120_000
        let server = try await LoopbackServer.start(routes: [
            // The first answer breaks off a third of the way in: the second attempt resumes.
            "/generated/report": Route(.generated(size: size, seed: 45), faults: Faults(), nextRequests: [Faults(dropAfter: size / 3)]),
        ])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let url = server.url("/generated/report")
        let result = try download(env, "report", url, ["--method", "POST", "--header", "Authorization: \(Self.bearer)"])
        #expect(result.status == 0, "\(result)")
        try await env.eventually("the download by POST") { fetcher.transfer("report")?.state == .completed }
        #expect(fetcher.downloaded("report") == Data(GeneratedBytes(size: size, seed: 45).bytes(0..<size)))
        let requests = server.requests(for: "/generated/report")
        #expect(requests.contains { ($0.range ?? "bytes=0-") != "bytes=0-" && $0.status == 206 }, "a resume: \(requests.map(\.range))")
        #expect(requests.count >= 2 && requests.allSatisfy { $0.method == "POST" && $0.values("Authorization") == [Self.bearer] },
                "\(requests.map(\.method))")
        await server.shutdown()
    }

    @Test func badHeadersAreOneLineFromBgctlAndARefusalFromTheInbox() async throws {
        let env = try TestEnvironment()
        _ = try FetcherApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let url = "http://127.0.0.1:9/x"
        let cases: [([String], String)] = [
            (["--header", "X-Bad: a\r\nInjected: \(Self.apiKey)"], "line break"),
            (["--header", "Authorization: \(Self.bearer)\nX: y"], "line break"),
            (["--header", "X-Big: " + String(repeating: "a", count: 100 * 1024)], "at most 8192"),
            (["--header", "Bad Name: x"], "not an RFC 9110 token"),
            (["--header", "no colon here"], "Name: value"),
            (["--header", "Host: example.com"], "set by the scheduler"),
            (["--method", "DELETE"], "not one a download may use"),
        ]
        for (arguments, reason) in cases {
            let result = try download(env, "bad", url, arguments)
            #expect(result.status == 2, "\(arguments.joined(separator: " ").prefix(80)): \(result.description.prefix(300))")
            let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: true)
            #expect(lines.count == 1 && result.stderr.contains(reason), "\(result.description.prefix(300))")
            #expect(!Self.secrets.contains { result.stderr.contains($0) }, "the value is not printed")
            #expect(result.stderr.count < 300)
        }

        // The same rules in the scheduler, for a program that writes the inbox by hand.
        let base: [String: Any] = ["type": "transferCreate", "app": FetcherApp.id, "identifier": "raw", "direction": "download",
                                   "url": url, "destination": "raw.bin"]
        var nul = base
        nul["headers"] = [["name": "Authorization", "value": "Bearer a\u{0}\(Self.apiKey)"]]
        var long = base
        long["headers"] = [["name": "X-Long", "value": String(repeating: "b", count: 9 * 1024)]]
        // A 100 KiB command is larger than any state file: rejected and quarantined before it is read.
        var big = base
        big["headers"] = [["name": "X-Big", "value": String(repeating: "b", count: 100 * 1024)]]
        var badName = base
        badName["headers"] = [["name": "X:Y", "value": "1"]]
        var badMethod = base
        badMethod["method"] = "PUT"
        for fields in [nul, long, badName, badMethod, big] { try writeRaw(env, fields) }
        try await env.eventually("four refusals and a rejection") {
            env.events(.refused).filter { $0.reason == "invalidCommand" }.count == 4 && !env.events(.commandRejected).isEmpty
        }
        #expect(env.events(.commandRejected).contains { $0.message.contains("larger than any state file") })
        let messages = env.events(.refused).map(\.message)
        #expect(messages.contains { $0.contains("NUL") } && messages.contains { $0.contains("at most 8192") }
                    && messages.contains { $0.contains("token") } && messages.contains { $0.contains("method 'PUT'") }, "\(messages)")
        #expect(daemon.isRunning)
        #expect((try env.list()["transfers"] as? [Any])?.isEmpty == true, "nothing was created")
        #expect(filesMentioningSecrets(env).isEmpty, "no secret in events.jsonl or logs")
    }

    /// Writes `fields` as a command into the inbox without going through `Command`.
    private func writeRaw(_ env: TestEnvironment, _ fields: [String: Any]) throws {
        let id = Command.newID()
        var object = fields
        object["id"] = id
        object["issuedAt"] = JSONFormat.string(from: Date())
        let temporary = "\(env.state)/inbox/tmp/\(id).json"
        try FileManager.default.createDirectory(atPath: "\(env.state)/inbox/tmp", withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, "\(env.paths.inboxNew)/\(id).json") == 0)
    }
}

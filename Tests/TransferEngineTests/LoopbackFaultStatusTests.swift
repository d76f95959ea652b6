import Crypto
import Foundation
import LoopbackServer
import Testing

extension LoopbackServerTests {
    /// Injected statuses, redirects and what the request records keep, read by a raw client.
    @Suite("Loopback server statuses, redirects and request records")
    struct StatusTests {
        var content: Route.Content { .generated(size: 1000, seed: 3) }

        @Test("retryAfter goes verbatim with an injected status, to downloads and uploads")
        func retryAfter() async throws {
            let route = Route(content, nextRequests: [Faults(status: 503, retryAfter: "2")])
            try await withLoopback(["/e": route]) { server in
                let seconds = try await rawRequest(port: server.port, "/e")
                #expect(seconds.statusLine == "HTTP/1.1 503 Service Unavailable")
                #expect(seconds.header("Retry-After") == "2")
                #expect(seconds.body == Array("injected status 503\n".utf8))
                #expect(try await rawRequest(port: server.port, "/e").status == 200)

                let date = "Sun, 22 Nov 2026 10:00:00 GMT"
                let encoded = "Sun,%2022%20Nov%202026%2010:00:00+GMT"
                let byQuery = try await rawRequest(port: server.port, "/e?status=429&retryAfter=\(encoded)")
                #expect(byQuery.statusLine == "HTTP/1.1 429 Too Many Requests")
                #expect(byQuery.header("Retry-After") == date)

                let upload = try await rawRequest(port: server.port, "PUT", "/up?status=503&retryAfter=7", body: [1, 2, 3])
                #expect(upload.status == 503)
                #expect(upload.header("Retry-After") == "7")

                let head = try await rawRequest(port: server.port, "HEAD", "/e?status=503&retryAfter=1")
                #expect(head.status == 503)
                #expect(head.header("Retry-After") == "1")
                #expect(head.body.isEmpty)
                // A status that is not injected carries none.
                #expect(try await rawRequest(port: server.port, "/missing?retryAfter=1").header("Retry-After") == nil)
            }
        }

        @Test("a redirect route answers every method with its status and Location, verbatim")
        func redirects() async throws {
            let routes = [
                "/moved": Route(.redirect(status: 301, location: "http://127.0.0.1:1/elsewhere?x=1")),
                "/relative": Route(.redirect(status: 302, location: "../other/place")),
                "/see": Route(.redirect(status: 303, location: "/e")),
                "/e": Route(content),
            ]
            try await withLoopback(routes) { server in
                let moved = try await rawRequest(port: server.port, "/moved")
                #expect(moved.statusLine == "HTTP/1.1 301 Moved Permanently")
                #expect(moved.header("Location") == "http://127.0.0.1:1/elsewhere?x=1")
                #expect(moved.header("Content-Length") == "0")
                #expect(moved.body.isEmpty)
                #expect(!moved.closed)

                let relative = try await rawRequest(port: server.port, "HEAD", "/relative")
                #expect(relative.statusLine == "HTTP/1.1 302 Found")
                #expect(relative.header("Location") == "../other/place")

                let see = try await rawRequest(port: server.port, "POST", "/see", body: [9, 9])
                #expect(see.statusLine == "HTTP/1.1 303 See Other")
                #expect(see.header("Location") == "/e")
                // An injected status still comes first.
                #expect(try await rawRequest(port: server.port, "/moved?status=500").status == 500)
            }
        }

        @Test("a 307 or 308 takes an upload's whole body first, and the record shows it was sent again whole")
        func uploadRedirect() async throws {
            let saved = FileManager.default.temporaryDirectory.appendingPathComponent("bgtop-up-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: saved) }
            let routes = [
                "/put": Route(.redirect(status: 307, location: "/put2")),
                "/put2": Route(.redirect(status: 308, location: "/store")),
                "/store": Route(.uploadTarget(saveTo: saved)),
            ]
            let body = GeneratedBytes(size: 300_000, seed: 8).bytes(0..<300_000)
            var hash = SHA256()
            hash.update(data: body)
            let digest = hash.finalize().hexDigest
            try await withLoopback(routes) { server in
                let first = try await rawRequest(port: server.port, "PUT", "/put", body: body)
                #expect(first.statusLine == "HTTP/1.1 307 Temporary Redirect")
                #expect(first.header("Location") == "/put2")
                #expect(first.body.isEmpty)
                let second = try await rawRequest(port: server.port, "PUT", "/put2", body: body)
                #expect(second.statusLine == "HTTP/1.1 308 Permanent Redirect")
                let stored = try await rawRequest(port: server.port, "PUT", "/store", body: body)
                #expect(stored.status == 201)

                let records = server.requests
                #expect(records.map(\.status) == [307, 308, 201])
                #expect(records.map(\.bodyBytes) == [300_000, 300_000, 300_000])
                #expect(records.map(\.sha256) == [digest, digest, digest] as [String?])
                // A redirect keeps nothing: only the last stop received an upload.
                #expect(server.receivedUpload("/put") == nil)
                #expect(server.receivedUpload("/store")?.sha256 == digest)
                #expect(try await sha256sum(saved) == digest)
            }
        }

        @Test("a request record keeps Accept-Encoding; a GET has no body bytes")
        func requestRecord() async throws {
            try await withLoopback(["/e": Route(content)]) { server in
                _ = try await rawRequest(port: server.port, "/e", headers: [("Accept-Encoding", "gzip, br")])
                _ = try await rawRequest(port: server.port, "POST", "/anywhere", body: [1, 2, 3, 4])
                let records = server.requests
                try #require(records.count == 2)
                #expect(records[0].acceptEncoding == "gzip, br")
                #expect(records[0].bodyBytes == 0)
                #expect(records[0].sha256 == nil)
                #expect(records[1].acceptEncoding == nil)
                #expect(records[1].bodyBytes == 4)
                var hash = SHA256()
                hash.update(data: [1, 2, 3, 4])
                #expect(records[1].sha256 == hash.finalize().hexDigest)
                #expect(server.receivedUpload("/anywhere")?.byteCount == 4)
            }
        }

        @Test("query parameters parse into faults; malformed ones are ignored")
        func queryParsing() {
            let faults = Faults(query: [
                "rangeExtra": "12", "unknownTotal": "1", "noLength": "true", "etag": "lastModifiedOnly",
                "ignoreIfRange": "1", "generation": "3", "rangeStatus": "204", "rangeEncoding": "gzip",
                "force416": "nolength", "retryAfter": "Sun,%2022%20Nov+2026",
            ])
            #expect(faults == Faults(rangeBodyExtra: 12, unknownTotal: true, omitContentLength: true,
                                     etag: .lastModifiedOnly, ignoreIfRange: true, generation: 3,
                                     statusForRangeRequests: 204, contentEncodingOnRange: "gzip",
                                     unsatisfiable: .withoutLength, retryAfter: "Sun, 22 Nov 2026"))
            let malformed = Faults(query: ["rangeExtra": "-4", "etag": "strong", "rangeStatus": "42",
                                           "force416": "yes", "generation": "x", "retryAfter": "%zz"])
            #expect(malformed == Faults(retryAfter: "%zz"))
            #expect(Faults(query: ["force416": "length", "etag": "none"])
                    == Faults(etag: .none, unsatisfiable: .withLength))
            // A route's validator fault survives a query that does not name one.
            #expect(Faults(etag: .weak).overridden(by: Faults(query: ["drop": "5"])) == Faults(dropAfter: 5, etag: .weak))
        }
    }
}

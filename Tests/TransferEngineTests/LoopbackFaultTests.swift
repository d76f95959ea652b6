import Foundation
import LoopbackServer
import Testing

extension LoopbackServerTests {
    /// Each fault as the bytes on the wire: status line, headers and body, read by a raw client.
    @Suite("Loopback server faults on the wire")
    struct FaultTests {
        let entity = GeneratedBytes(size: 1000, seed: 3)
        var content: Route.Content { .generated(size: 1000, seed: 3) }

        @Test("a 206 with rangeExtra sends more than its Content-Range, and Content-Length counts it")
        func rangeBodyExtra() async throws {
            try await withLoopback(["/e": Route(content)]) { server in
                let inside = try await rawRequest(port: server.port, "/e?rangeExtra=50", headers: [("Range", "bytes=100-199")])
                #expect(inside.statusLine == "HTTP/1.1 206 Partial Content")
                #expect(inside.header("Content-Range") == "bytes 100-199/1000")
                #expect(inside.header("Content-Length") == "150")
                #expect(inside.body == entity.bytes(100..<250))
                #expect(!inside.closed)

                // Past the end the extra bytes are anything, but still exactly as many as announced.
                let pastEnd = try await rawRequest(port: server.port, "/e?rangeExtra=100", headers: [("Range", "bytes=950-")])
                #expect(pastEnd.status == 206)
                #expect(pastEnd.header("Content-Range") == "bytes 950-999/1000")
                #expect(pastEnd.header("Content-Length") == "150")
                #expect(pastEnd.body.count == 150)
                #expect(Array(pastEnd.body.prefix(50)) == entity.bytes(950..<1000))

                // A 200 is left alone.
                let whole = try await rawRequest(port: server.port, "/e?rangeExtra=50")
                #expect(whole.status == 200)
                #expect(whole.header("Content-Length") == "1000")
                #expect(whole.body == entity.bytes(0..<1000))
            }
        }

        @Test("unknownTotal hides the size in Content-Range")
        func unknownTotal() async throws {
            try await withLoopback(["/e": Route(content, faults: Faults(unknownTotal: true))]) { server in
                let response = try await rawRequest(port: server.port, "/e", headers: [("Range", "bytes=10-19")])
                #expect(response.statusLine == "HTTP/1.1 206 Partial Content")
                #expect(response.header("Content-Range") == "bytes 10-19/*")
                #expect(response.header("Content-Length") == "10")
                #expect(response.body == entity.bytes(10..<20))
                let byQuery = try await rawRequest(port: server.port, "/generated/500?seed=2&unknownTotal=1",
                                                   headers: [("Range", "bytes=490-")])
                #expect(byQuery.header("Content-Range") == "bytes 490-499/*")
            }
        }

        @Test("noLength sends a close-delimited body, and a drop then looks like a clean end")
        func omitContentLength() async throws {
            try await withLoopback(["/e": Route(content)]) { server in
                let whole = try await rawRequest(port: server.port, "/e?noLength=1")
                #expect(whole.statusLine == "HTTP/1.1 200 OK")
                #expect(whole.header("Content-Length") == nil)
                #expect(whole.header("Transfer-Encoding") == nil)
                #expect(whole.header("Connection") == "close")
                #expect(whole.closed)
                #expect(whole.body == entity.bytes(0..<1000))

                let cut = try await rawRequest(port: server.port, "/e?noLength=1&drop=300")
                #expect(cut.status == 200)
                #expect(cut.header("Content-Length") == nil)
                #expect(cut.header("Transfer-Encoding") == nil)
                #expect(cut.closed)
                #expect(cut.body == entity.bytes(0..<300))

                let range = try await rawRequest(port: server.port, "/e?noLength=1", headers: [("Range", "bytes=900-")])
                #expect(range.status == 206)
                #expect(range.header("Content-Range") == "bytes 900-999/1000")
                #expect(range.header("Content-Length") == nil)
                #expect(range.body == entity.bytes(900..<1000))

                let head = try await rawRequest(port: server.port, "HEAD", "/e?noLength=1")
                #expect(head.status == 200)
                #expect(head.header("Content-Length") == nil)
                #expect(head.header("Connection") == "close")
                #expect(head.body.isEmpty)
            }
        }

        @Test("each ETag mode advertises its validators, and If-Range matches only what was advertised")
        func etagModes() async throws {
            try await withLoopback(["/e": Route(content)]) { server in
                let normal = try await rawRequest(port: server.port, "/e")
                let etag = try #require(normal.header("ETag"))
                let lastModified = try #require(normal.header("Last-Modified"))
                #expect(etag == "\"g3-1000\"")
                #expect(lastModified.hasSuffix(" GMT"))

                func resume(_ mode: String, ifRange: String) async throws -> RawResponse {
                    try await rawRequest(port: server.port, "/e?etag=\(mode)",
                                         headers: [("Range", "bytes=500-"), ("If-Range", ifRange)])
                }

                let normalByTag = try await resume("normal", ifRange: etag)
                #expect(normalByTag.status == 206)
                #expect(normalByTag.header("ETag") == etag)
                #expect(normalByTag.body == entity.bytes(500..<1000))
                #expect(try await resume("normal", ifRange: lastModified).status == 206)
                #expect(try await resume("normal", ifRange: "\"g3-999\"").status == 200)

                let weak = try await rawRequest(port: server.port, "/e?etag=weak")
                #expect(weak.header("ETag") == "W/" + etag)
                #expect(weak.header("Last-Modified") == lastModified)
                // A weak ETag never matches, in either spelling; the date still does.
                let weakByTag = try await resume("weak", ifRange: "W/" + etag)
                #expect(weakByTag.statusLine == "HTTP/1.1 200 OK")
                #expect(weakByTag.body == entity.bytes(0..<1000))
                #expect(try await resume("weak", ifRange: etag).status == 200)
                #expect(try await resume("weak", ifRange: lastModified).status == 206)

                let dateOnly = try await rawRequest(port: server.port, "/e?etag=lastModifiedOnly")
                #expect(dateOnly.header("ETag") == nil)
                #expect(dateOnly.header("Last-Modified") == lastModified)
                #expect(try await resume("lastModifiedOnly", ifRange: etag).status == 200)
                let dateOnlyByDate = try await resume("lastModifiedOnly", ifRange: lastModified)
                #expect(dateOnlyByDate.status == 206)
                #expect(dateOnlyByDate.body == entity.bytes(500..<1000))

                let none = try await rawRequest(port: server.port, "/e?etag=none")
                #expect(none.status == 200)
                #expect(none.header("ETag") == nil)
                #expect(none.header("Last-Modified") == nil)
                #expect(none.header("Accept-Ranges") == "bytes")
                #expect(try await resume("none", ifRange: etag).status == 200)
                #expect(try await resume("none", ifRange: lastModified).status == 200)
                // Without If-Range there is nothing to compare: the range is served.
                let blind = try await rawRequest(port: server.port, "/e?etag=none", headers: [("Range", "bytes=500-")])
                #expect(blind.status == 206)
                #expect(blind.body == entity.bytes(500..<1000))
            }
        }

        @Test("ignoreIfRange serves the range although If-Range names another entity")
        func ignoreIfRange() async throws {
            try await withLoopback(["/e": Route(content)]) { server in
                let headers = [("Range", "bytes=200-299"), ("If-Range", "\"someone-else\"")]
                let honest = try await rawRequest(port: server.port, "/e", headers: headers)
                #expect(honest.status == 200)
                #expect(honest.body == entity.bytes(0..<1000))
                let broken = try await rawRequest(port: server.port, "/e?ignoreIfRange=1", headers: headers)
                #expect(broken.statusLine == "HTTP/1.1 206 Partial Content")
                #expect(broken.header("Content-Range") == "bytes 200-299/1000")
                #expect(broken.body == entity.bytes(200..<300))
            }
        }

        @Test("generation serves another representation of generated content, and a file unchanged")
        func generation() async throws {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("bgtop-gen-\(UUID().uuidString)").path
            try Data(entity.bytes(0..<1000)).write(to: URL(fileURLWithPath: file))
            defer { try? FileManager.default.removeItem(atPath: file) }
            try await withLoopback(["/e": Route(content), "/f": Route(.file(file))]) { server in
                let original = try await rawRequest(port: server.port, "/e")
                let moved = try await rawRequest(port: server.port, "/e?generation=2")
                #expect(moved.status == 200)
                #expect(moved.header("ETag") == "\"g5-1000\"")
                #expect(moved.header("Last-Modified") != original.header("Last-Modified"))
                #expect(moved.body == GeneratedBytes(size: 1000, seed: 5).bytes(0..<1000))

                let fileOriginal = try await rawRequest(port: server.port, "/f")
                let fileMoved = try await rawRequest(port: server.port, "/f?generation=2")
                #expect(fileMoved.header("ETag") == fileOriginal.header("ETag"))
                #expect(fileMoved.body == entity.bytes(0..<1000))
            }
        }

        @Test("a changed entity spliced onto a resume: new bytes and ETag in a 206 despite If-Range")
        func changedEntitySplice() async throws {
            let route = Route(content, faults: Faults(generation: 1),
                              nextRequests: [Faults(dropAfter: 400), Faults(ignoreIfRange: true, generation: 1)])
            try await withLoopback(["/e": route]) { server in
                let first = try await rawRequest(port: server.port, "/e")
                #expect(first.status == 200)
                #expect(first.closed)
                #expect(first.body == entity.bytes(0..<400))
                let oldTag = try #require(first.header("ETag"))

                let resumed = try await rawRequest(port: server.port, "/e",
                                                   headers: [("Range", "bytes=400-"), ("If-Range", oldTag)])
                #expect(resumed.status == 206)
                #expect(resumed.header("ETag") == "\"g4-1000\"")
                #expect(resumed.body == GeneratedBytes(size: 1000, seed: 4).bytes(400..<1000))

                // Later requests see the new entity, and If-Range works again.
                let later = try await rawRequest(port: server.port, "/e",
                                                 headers: [("Range", "bytes=400-"), ("If-Range", oldTag)])
                #expect(later.status == 200)
                #expect(later.body == GeneratedBytes(size: 1000, seed: 4).bytes(0..<1000))
            }
        }

        @Test("rangeStatus answers only range requests, with that status and no body")
        func statusForRangeRequests() async throws {
            try await withLoopback(["/e": Route(content)]) { server in
                let noContent = try await rawRequest(port: server.port, "/e?rangeStatus=204", headers: [("Range", "bytes=10-")])
                #expect(noContent.statusLine == "HTTP/1.1 204 No Content")
                #expect(noContent.header("Content-Length") == nil)
                #expect(noContent.header("Content-Range") == nil)
                #expect(noContent.body.isEmpty)

                let accepted = try await rawRequest(port: server.port, "/e?rangeStatus=202", headers: [("Range", "bytes=10-")])
                #expect(accepted.statusLine == "HTTP/1.1 202 Accepted")
                #expect(accepted.header("Content-Length") == "0")
                #expect(accepted.body.isEmpty)
                #expect(!accepted.closed)

                let plain = try await rawRequest(port: server.port, "/e?rangeStatus=204")
                #expect(plain.status == 200)
                #expect(plain.body == entity.bytes(0..<1000))
                #expect(server.requests(for: "/e").map(\.status) == [204, 202, 200])
            }
        }

        @Test("rangeEncoding labels a 206 gzip and sends bytes that are not the entity's")
        func contentEncodingOnRange() async throws {
            try await withLoopback(["/e": Route(content, faults: Faults(contentEncodingOnRange: "gzip"))]) { server in
                let range = try await rawRequest(port: server.port, "/e", headers: [("Range", "bytes=100-199")])
                #expect(range.status == 206)
                #expect(range.header("Content-Encoding") == "gzip")
                #expect(range.header("Content-Range") == "bytes 100-199/1000")
                #expect(range.header("Content-Length") == "100")
                #expect(range.body == entity.bytes(100..<200).map { $0 ^ 0x5A })

                let whole = try await rawRequest(port: server.port, "/e")
                #expect(whole.status == 200)
                #expect(whole.header("Content-Encoding") == nil)
                #expect(whole.body == entity.bytes(0..<1000))

                let byQuery = try await rawRequest(port: server.port, "/generated/300?rangeEncoding=br",
                                                   headers: [("Range", "bytes=0-9")])
                #expect(byQuery.header("Content-Encoding") == "br")
            }
        }

        @Test("force416 refuses every range, with or without Content-Range")
        func unsatisfiable() async throws {
            try await withLoopback(["/e": Route(content)]) { server in
                let withLength = try await rawRequest(port: server.port, "/e?force416=length", headers: [("Range", "bytes=0-")])
                #expect(withLength.statusLine == "HTTP/1.1 416 Range Not Satisfiable")
                #expect(withLength.header("Content-Range") == "bytes */1000")
                #expect(withLength.header("Content-Length") == "0")
                #expect(withLength.body.isEmpty)

                let withoutLength = try await rawRequest(port: server.port, "/e?force416=nolength", headers: [("Range", "bytes=0-")])
                #expect(withoutLength.status == 416)
                #expect(withoutLength.header("Content-Range") == nil)
                #expect(withoutLength.body.isEmpty)

                let plain = try await rawRequest(port: server.port, "/e?force416=length")
                #expect(plain.status == 200)
                #expect(plain.body.count == 1000)
            }
        }

        @Test("the older faults keep their framing now that the server sets it itself")
        func olderFaultsFraming() async throws {
            try await withLoopback(["/e": Route(content)]) { server in
                let lie = try await rawRequest(port: server.port, "/e?lie=100")
                #expect(lie.header("Content-Length") == "1100")
                #expect(lie.body == entity.bytes(0..<1000))
                #expect(lie.closed)

                let ignored = try await rawRequest(port: server.port, "/e?ignoreRange=1", headers: [("Range", "bytes=5-")])
                #expect(ignored.statusLine == "HTTP/1.1 200 OK")
                #expect(ignored.header("Content-Range") == nil)
                #expect(ignored.body == entity.bytes(0..<1000))

                let natural416 = try await rawRequest(port: server.port, "/e", headers: [("Range", "bytes=1000-")])
                #expect(natural416.status == 416)
                #expect(natural416.header("Content-Range") == "bytes */1000")

                let clean = try await rawRequest(port: server.port, "/e")
                #expect(clean.headerNames == ["etag", "last-modified", "accept-ranges", "content-type", "content-length"])
                #expect(clean.header("Transfer-Encoding") == nil)
                #expect(!clean.closed)

                let noContent = try await rawRequest(port: server.port, "/e?status=204")
                #expect(noContent.statusLine == "HTTP/1.1 204 No Content")
                #expect(noContent.header("Content-Length") == nil)
                #expect(noContent.body.isEmpty)
                // The connection stays usable: the next request is answered normally.
                #expect(try await rawRequest(port: server.port, "/e").status == 200)
            }
        }
    }
}

import Foundation
import LoopbackServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension LoopbackServerTests {
    /// ``Faults/hold``: a request waits unanswered until the test releases it, or the server shuts down.
    @Suite("Loopback server holds")
    struct HoldTests {
        let entity = GeneratedBytes(size: 1000, seed: 3)

        @Test("a held download gets no answer until the release; later requests pass at once")
        func download() async throws {
            let hold = ResponseHold()
            try await withLoopback(["/e": Route(.generated(size: 1000, seed: 3), faults: Faults(hold: hold))]) { server in
                async let response = rawRequest(port: server.port, "/e")
                let answered = await releaseOnArrival(hold) { server.requests(for: "/e").count }
                #expect(answered == 0, "nothing was answered while the request was held")
                let held = try await response
                #expect(held.status == 200)
                #expect(held.body == entity.bytes(0..<1000))
                let later = try await rawRequest(port: server.port, "/e")
                #expect(later.status == 200)
                #expect(hold.arrivals == 2)
            }
        }

        @Test("a held upload is read whole and kept, and answered only after the release")
        func upload() async throws {
            let hold = ResponseHold()
            try await withLoopback(["/up": Route(.uploadTarget(saveTo: "/dev/null"), faults: Faults(hold: hold))]) { server in
                let body = [UInt8](repeating: 7, count: 5000)
                async let response = rawRequest(port: server.port, "PUT", "/up", body: body)
                let seen = await releaseOnArrival(hold) { (server.receivedUpload("/up"), server.requests(for: "/up").count) }
                #expect(seen.0?.byteCount == 5000 && seen.0?.isComplete == true, "the body was in: \(String(describing: seen.0))")
                #expect(seen.1 == 0, "not answered while held")
                let answer = try await response
                #expect(answer.status == 201)
            }
        }

        @Test("a shutdown ends a request still held, without an answer")
        func shutdown() async throws {
            let hold = ResponseHold()
            let server = try await LoopbackServer.start(routes: ["/e": Route(.generated(size: 1000, seed: 3), faults: Faults(hold: hold))])
            let request = Task { try await rawRequest(port: server.port, "/e") }
            _ = await releaseOnArrival(hold, release: false) { 0 }
            await server.shutdown()
            await #expect(throws: (any Error).self, "no answer came") { try await request.value }
            #expect(server.requests(for: "/e").isEmpty)
        }

        /// Off the cooperative pool (a starved pool must not keep a request held past the raw
        /// client's 10 s read timeout): waits up to 10 s for a request to reach `hold`, takes
        /// `look()`, then releases the hold unless told not to.
        private func releaseOnArrival<T: Sendable>(_ hold: ResponseHold, release: Bool = true,
                                                   _ look: @escaping @Sendable () -> T) async -> T {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    for _ in 0..<10_000 where hold.arrivals == 0 { usleep(1000) }
                    let seen = look()
                    if release { hold.release() }
                    continuation.resume(returning: seen)
                }
            }
        }
    }
}

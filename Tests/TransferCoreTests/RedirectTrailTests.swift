import Testing
import TransferCore

@Suite("Redirects: the method rule, relative targets, loops (RFC 9110 §15.4)")
struct RedirectTrailTests {
    @Test("303 turns an upload into a GET without a body; 301, 302, 307 and 308 send the body again")
    func methodRule() throws {
        for status in [301, 302, 307, 308] {
            var trail = RedirectTrail(url: "http://h/a", method: "PUT")
            let hop = try trail.follow(status: status, location: "http://h/b").get()
            #expect(hop == RedirectTrail.Hop(url: "http://h/b", method: "PUT", sendsBody: true), "\(status)")
        }
        var trail = RedirectTrail(url: "http://h/a", method: "POST")
        #expect(try trail.follow(status: 303, location: "/result").get() == RedirectTrail.Hop(url: "http://h/result", method: "GET", sendsBody: false))
        var get = RedirectTrail(url: "http://h/a", method: "GET")
        #expect(try get.follow(status: 307, location: "b?x=1#frag").get().url == "http://h/b?x=1")
    }

    @Test("a loop fails at once, and so does a chain past the limit or a target that is not http(s)")
    func failures() throws {
        var loop = RedirectTrail(url: "http://h/a", method: "GET")
        _ = try loop.follow(status: 302, location: "/b").get()
        guard case .failure(.redirectLoop) = loop.follow(status: 302, location: "/a") else {
            Issue.record("a → b → a is a loop")
            return
        }
        var long = RedirectTrail(url: "http://h/0", method: "GET")
        for hop in 1...RedirectTrail.maximumHops { _ = try long.follow(status: 302, location: "/\(hop)").get() }
        guard case .failure(.redirectLoop) = long.follow(status: 302, location: "/next") else {
            Issue.record("more than \(RedirectTrail.maximumHops) hops fail")
            return
        }
        var ftp = RedirectTrail(url: "http://h/a", method: "GET")
        #expect(ftp.follow(status: 301, location: "ftp://h/file") == .failure(.unsupportedScheme("ftp")))
        var bad = RedirectTrail(url: "http://h/a", method: "GET")
        guard case .failure(.invalidResponse) = bad.follow(status: 301, location: "http://") else {
            Issue.record("a Location without a host is not followed")
            return
        }
    }
}

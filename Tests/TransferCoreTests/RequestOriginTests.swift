import Testing
import TransferCore

@Suite("Secrets follow a redirect only to the same origin (RFC 9110 §15.4, CVE-2018-1000007)")
struct RequestOriginTests {
    @Test("same scheme, host and port (default ports filled in, case ignored) keep secrets; any difference drops them")
    func origins() {
        let original = "http://Example.com/a?x=1"
        #expect(RequestOrigin.mayCarrySecrets(to: "http://example.com:80/b", givenFor: original))
        #expect(RequestOrigin.mayCarrySecrets(to: "HTTP://EXAMPLE.COM/c#f", givenFor: original))
        #expect(!RequestOrigin.mayCarrySecrets(to: "https://example.com/a", givenFor: original), "scheme")
        #expect(!RequestOrigin.mayCarrySecrets(to: "http://example.com:8080/a", givenFor: original), "port")
        #expect(!RequestOrigin.mayCarrySecrets(to: "http://example.org/a", givenFor: original), "host")
        #expect(!RequestOrigin.mayCarrySecrets(to: "http://evil.example.com/a", givenFor: original), "subdomain")
        #expect(!RequestOrigin.mayCarrySecrets(to: "not a url", givenFor: original))
        #expect(RequestOrigin.mayCarrySecrets(to: "https://h:443/x", givenFor: "https://h/y"))
    }
}

import TaskState
import Testing

/// What a URL shows of its credentials: nothing secret, everything else as given.
@Suite struct URLTextTests {
    @Test(arguments: [
        ("https://ana:s3cret@example.com/f.bin", "https://redacted@example.com/f.bin"),
        ("https://ghp_token@example.com/repo", "https://redacted@example.com/repo"),
        ("https://ghp_token:x-oauth-basic@example.com/repo", "https://redacted@example.com/repo"),
        ("http://sk_live_key:@example.com", "http://redacted@example.com"),
        ("https://ana:p@ss@example.com:8443/a?b=c@d#e@f", "https://redacted@example.com:8443/a?b=c@d#e@f"),
        ("https://example.com/a@b", "https://example.com/a@b"),
        ("https://example.com?x=y@z", "https://example.com?x=y@z"),
        ("https://example.com", "https://example.com"),
        ("not a url @ all", "not a url @ all"),
        ("", ""),
    ])
    func credentialsAreHiddenAndTheRestKept(_ url: String, _ shown: String) {
        #expect(URLText.hidingCredentials(url) == shown)
    }
}

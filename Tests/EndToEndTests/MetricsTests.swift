import Foundation
import TaskState
import TestSupport
import Testing

/// `bgctl metrics` and `bgtaskd --metrics`: the state as Prometheus metrics, read by a real parser
/// (the Python `prometheus_client` text parser, installed by `.ci/run`) from a real scrape.
@Suite struct MetricsTests {
    static let app = "com.example.metered"

    /// The samples `text` holds, as `name{label="value",…} value` lines sorted, from
    /// prometheus_client's parser (it fails on anything that is not the exposition format).
    private func parsed(_ env: TestEnvironment, source: String) throws -> [String] {
        let script = """
            import sys, urllib.request
            from prometheus_client.parser import text_string_to_metric_families
            source = sys.argv[1]
            text = urllib.request.urlopen(source).read().decode() if source.startswith("http") else open(source).read()
            for family in text_string_to_metric_families(text):
                for s in family.samples:
                    labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
                    print(f"{family.type} {s.name}{{{labels}}} {s.value}")
            """
        let result = try env.run("/usr/bin/env", ["python3", "-c", script, source])
        guard result.status == 0 else { throw TestFailure("the parser refused it: \(result)") }
        return result.stdout.split(separator: "\n").map(String.init).sorted()
    }

    @Test func aScrapeAndBgctlMetricsAreReadByAPrometheusParser() async throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: ["\(Self.app).refresh", "\(Self.app).clean"], script: "exit 0")
        let daemon = try env.startDaemon(arguments: ["--metrics", "127.0.0.1:0"])
        defer { daemon.stop() }
        try await env.eventually("the metrics address in the log") { daemon.log.contains("serving metrics at http://127.0.0.1:") }
        let address = try #require(daemon.log.split(separator: "\n").first { $0.contains("serving metrics at") }?
            .split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", "\(Self.app).refresh", "--kind", "refresh", "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", "\(Self.app).clean", "--kind", "processing", "--earliest", "+3600").status == 0)

        let scraped = try parsed(env, source: address)
        #expect(scraped.contains("gauge bgtask_scheduler_up{} 1.0"), "\(scraped)")
        #expect(scraped.contains("gauge bgtask_pending_requests{app=\"\(Self.app)\",kind=\"appRefresh\"} 1.0"), "\(scraped)")
        #expect(scraped.contains("gauge bgtask_pending_requests{app=\"\(Self.app)\",kind=\"processing\"} 1.0"), "\(scraped)")
        #expect(scraped.contains("gauge bgtask_app_enabled{app=\"\(Self.app)\"} 1.0"), "\(scraped)")
        #expect(scraped.contains { $0.hasPrefix("counter bgtask_launches_total{app=\"\(Self.app)\"} ") }, "\(scraped)")

        // The same from bgctl, for node_exporter's textfile collector.
        let printed = try env.bgctl("metrics")
        #expect(printed.status == 0, "\(printed)")
        let file = env.root + "/bgtask.prom"
        try Data(printed.stdout.utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try parsed(env, source: file)
        #expect(fromFile.contains("gauge bgtask_pending_requests{app=\"\(Self.app)\",kind=\"processing\"} 1.0"))
        #expect(Set(fromFile.map { $0.split(separator: " ")[1] }) == Set(scraped.map { $0.split(separator: " ")[1] }),
                "the same series either way")

        // Anything but GET /metrics.
        let other = try env.run("/usr/bin/env", ["python3", "-c", """
            import urllib.request, urllib.error, sys
            for url, method in ((sys.argv[1].replace("/metrics", "/other"), "GET"), (sys.argv[1], "POST")):
                try:
                    urllib.request.urlopen(urllib.request.Request(url, method=method, data=b"" if method == "POST" else None))
                    print(url, 200)
                except urllib.error.HTTPError as e:
                    print(method, e.code)
            """, address])
        #expect(other.stdout == "GET 404\nPOST 405\n", "\(other)")
        #expect(daemon.isRunning)
    }

    @Test func aBadAddressIsOneLineAndABusyPortStopsTheStart() throws {
        let env = try TestEnvironment()
        let bad = try env.run(TestEnvironment.binaries + "/bgtaskd", ["--state", env.state, "--config", env.config, "--metrics", "nowhere"])
        #expect(bad.status == 64 || bad.status == 2, "\(bad)")
        #expect(bad.stderr.contains("bad --metrics 'nowhere': expected HOST:PORT"), "\(bad)")
        let first = try env.startDaemon(arguments: ["--metrics", "127.0.0.1:0"])
        defer { first.stop() }
        try env.waitUntil("the metrics address in the log") { first.log.contains("serving metrics at http://127.0.0.1:") }
        let line = try #require(first.log.split(separator: "\n").first { $0.contains("serving metrics at http://") })
        let url = try #require(line.components(separatedBy: "serving metrics at http://").last)
        let address = try #require(url.components(separatedBy: "/metrics").first)
        let other = try TestEnvironment()
        let busy = try other.run(TestEnvironment.binaries + "/bgtaskd", ["--state", other.state, "--config", other.config, "--metrics", address])
        #expect(busy.status == 1, "\(busy)")
        #expect(busy.stderr.contains("bgtaskd: cannot serve metrics on \(address):"), "\(busy)")
    }
}

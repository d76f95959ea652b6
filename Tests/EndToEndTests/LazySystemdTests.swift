import Foundation
import TestSupport
import Testing

/// libsystemd is loaded on the first sd-bus call, not linked: a program that never talks to the
/// system bus (bgtop outside its demo, bgctl) maps neither it nor the five libraries it brings.
@Suite struct LazySystemdTests {
    @Test(arguments: ["bgtaskd", "bgtop", "bgctl"])
    func noProgramLinksLibsystemd(program: String) throws {
        let dynamic = try BoundedProcess.run(["/usr/bin/env", "readelf", "-d", TestEnvironment.binaries + "/" + program], timeout: 60)
        try #require(dynamic.status == 0, "readelf (binutils) reads the program: \(dynamic.stderr)")
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libc.so") }, "\(program) needs the C library: \(needed)")
        #expect(!needed.contains { $0.contains("libsystemd") }, "\(program) links libsystemd: \(needed)")
    }

    /// The loader's own account (`LD_DEBUG=libs`) of what bgtop loads while it draws a screen of
    /// a running scheduler's state; the scheduler beside it, which opens the bus, loads it.
    @Test func bgtopLoadsNoLibsystemdAndTheSchedulerDoes() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.lazy", identifiers: ["com.example.lazy.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let result = try env.run(TestEnvironment.binaries + "/bgtop", ["--batch", "--state", env.state, "--config", env.config],
                                 environment: ["LD_DEBUG": "libs"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("scheduler up"), "\(result.stdout)")
        #expect(result.stderr.contains("libc.so.6"), "the loader reported what it loaded: \(result.stderr.prefix(400))")
        #expect(!result.stderr.contains("libsystemd"), "bgtop loaded libsystemd: \(result.stderr)")
        // Read to the end: /proc files report size 0, and String(contentsOfFile:) stopped at 4 KiB.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(daemon.pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        #expect(maps.contains("libc.so.6"), "the whole map was read")
        #expect(maps.contains("libsystemd.so"), "the scheduler loaded libsystemd for its condition sources")
    }
}

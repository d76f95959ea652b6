import Foundation
import TestSupport
import Testing

/// The programs a user installs (`bgtaskd`, `bgctl`, and `bgtop` built with
/// `--disable-default-traits`) link FoundationEssentials alone: Foundation brings ICU and a few
/// MiB of resident memory (docs/performance.md, footprint). Without Foundation's
/// internationalization, some FoundationEssentials calls answer differently: `TimeZone(identifier:
/// "UTC")` is `nil` (an installed `bgtop` once trapped on it at its first frame), and the current
/// zone, locale and calendar are not the user's. The debug build `swift test` runs links Foundation
/// into `bgtop` (the demo's Stormy, a default trait) and into this test process, so neither would
/// show it; the compiled objects of the programs' own modules are read instead.
@Suite struct EssentialsOnlyTests {
    /// The modules the installed programs are made of, ours (their dependencies are checked by
    /// what the binaries link: `bgtaskd` and `bgctl` have no Foundation at all).
    static let modules = ["TaskState", "SchedulerCore", "TransferCore", "SchedulerRuntime", "TransferEngine", "StateMetrics",
                          "StateFeed", "Dashboard", "DashboardFeed", "CursesTerminal", "LoopbackServer", "bgtaskd", "bgctl", "bgtop"]

    /// What none of them may use, as parts of mangled names: Foundation's modules (their types,
    /// and their extensions of other modules' types, `$sSS10FoundationE…` for `String(format:)`),
    /// and the FoundationEssentials calls whose answer depends on Foundation being linked.
    static let forbidden: [(part: String, what: String)] = [
        ("10Foundation", "Foundation (import FoundationEssentials instead)"),
        ("19FoundationNetworking", "FoundationNetworking"),
        ("30FoundationInternationalization", "FoundationInternationalization"),
        ("$s20FoundationEssentials8TimeZoneV10identifier", "TimeZone(identifier:) (nil without Foundation; use .gmt or TaskState's WallClockZone)"),
        ("$s20FoundationEssentials8TimeZoneV12abbreviation", "TimeZone(abbreviation:)"),
        ("$s20FoundationEssentials8TimeZoneV7current", "TimeZone.current (GMT without Foundation; use WallClockZone)"),
        ("$s20FoundationEssentials8TimeZoneV19autoupdatingCurrent", "TimeZone.autoupdatingCurrent"),
        ("$s20FoundationEssentials8CalendarV7current", "Calendar.current"),
        ("$s20FoundationEssentials8CalendarV19autoupdatingCurrent", "Calendar.autoupdatingCurrent"),
        ("$s20FoundationEssentials6LocaleV", "Locale"),
    ]

    /// The libraries an object asks the linker for (`import Foundation` alone adds `-lFoundation`,
    /// even when nothing of Foundation's is used).
    static let forbiddenLibraries = ["-lFoundation", "-lFoundationNetworking", "-lFoundationInternationalization"]

    @Test(arguments: modules)
    func theModuleUsesFoundationEssentialsAlone(module: String) throws {
        let folder = TestEnvironment.binaries + "/\(module).build"
        let objects = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift.o") }.sorted()
        try #require(!objects.isEmpty, "\(folder) holds the module's objects (swift build --build-tests)")
        let paths = objects.map { "\(folder)/\($0)" }
        let listing = try BoundedProcess.run(["/usr/bin/env", "nm", "--undefined-only", "--print-file-name"] + paths, timeout: 120)
        try #require(listing.status == 0, "nm (binutils) lists the objects' symbols: \(listing.stderr)")
        let lines = listing.stdout.split(separator: "\n")
        #expect(lines.count > objects.count, "the objects refer to symbols they do not define")
        for (part, what) in Self.forbidden {
            let users = lines.filter { $0.contains(part) }.map { line in
                String(line.split(separator: ":").first.map { $0.split(separator: "/").last ?? $0 } ?? line)
            }
            #expect(users.isEmpty, "\(module) uses \(what): \(Array(Set(users)).sorted().prefix(5))")
        }
        // "-lFoundationEssentials" is fine; only whole entries count.
        let entries = try BoundedProcess.run(["/usr/bin/env", "readelf", "-p", ".swift1_autolink_entries"] + paths, timeout: 120)
        try #require(entries.status == 0, "readelf (binutils) dumps the objects' autolink entries: \(entries.stderr)")
        #expect(entries.stdout.contains("-lswiftCore"), "the dump lists the objects' libraries")
        let asked = entries.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
        for library in Self.forbiddenLibraries {
            #expect(!asked.contains(library), "\(module) imports a Foundation module (\(library)); import FoundationEssentials instead")
        }
    }

    @Test(arguments: ["bgtaskd", "bgctl"])
    func theDaemonAndTheCommandLinkNoFoundation(program: String) throws {
        let listing = try BoundedProcess.run(["/usr/bin/env", "nm", "--defined-only", TestEnvironment.binaries + "/" + program], timeout: 120)
        try #require(listing.status == 0, "nm (binutils) lists the program's symbols: \(listing.stderr)")
        let lines = listing.stdout.split(separator: "\n")
        #expect(lines.count > 1000, "\(program) has symbols")
        #expect(lines.contains { $0.contains("s20FoundationEssentials") }, "\(program) links FoundationEssentials")
        let foundation = lines.filter { $0.contains(" $s10Foundation") || $0.contains(" $s19FoundationNetworking") }
        #expect(foundation.isEmpty, "\(program) links Foundation: \(foundation.prefix(3))")
    }
}

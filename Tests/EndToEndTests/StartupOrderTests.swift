import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where the start-up order is applied, and so checked.
enum StartupOrderLink {
    /// Package.swift links with lld, and so applies the order, where glibc is 2.36 or later and
    /// `ld.lld` is on PATH (Swift's toolchains ship it): this machine's kind and CI's. The test
    /// reads the debug build `swift test` makes: in a release build the whole-file blocks at the
    /// front of `.text` put the median at 12-21 % (docs/performance.md).
    static var orderIsApplied: Bool {
        #if DEBUG
        var text = [CChar](repeating: 0, count: 64)
        guard confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count) > 0 else { return false }
        let version = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
        guard version.count >= 2, (version[0], version[1]) >= (2, 36) else { return false }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").contains { access("\($0)/ld.lld", X_OK) == 0 }
        #else
        return false
        #endif
    }

    static let notApplied: Comment = "the start-up order is applied where Package.swift links with lld (glibc 2.36 and ld.lld on PATH), and read from the debug build"
}

/// The start-up order is in effect: lld laid out the functions `Linker/<program>.order` names at
/// the front of each program's `.text` (docs/performance.md, footprint), and the file still names
/// enough of the program's functions to matter. Without the order (a wrong path in Package.swift,
/// the flag dropped) the named functions sit all over the binary, a median 44-78 % into the
/// debug programs' `.text`; with it, 2-7 %.
@Suite(.enabled(if: StartupOrderLink.orderIsApplied, StartupOrderLink.notApplied))
struct StartupOrderTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["bgtaskd", "bgctl", "bgtop"])
    func theNamedFunctionsComeFirst(program: String) throws {
        let order = try String(contentsOf: Self.repository.appendingPathComponent("Linker/\(program).order"), encoding: .utf8)
        let named = Set(order.split(separator: "\n").map(String.init))
        let listing = try BoundedProcess.run(["/usr/bin/env", "nm", "-n", "--defined-only", TestEnvironment.binaries + "/" + program], timeout: 120)
        try #require(listing.status == 0, "nm (binutils) lists the program's symbols: \(listing.stderr)")
        // Code symbols by address: "ADDRESS TYPE NAME".
        let functions = listing.stdout.split(separator: "\n").compactMap { line -> (address: UInt64, name: Substring)? in
            let fields = line.split(separator: " ")
            guard fields.count == 3, "tTwW".contains(fields[1]), let address = UInt64(fields[0], radix: 16) else { return nil }
            return (address, fields[2])
        }
        try #require(functions.count > 1000, "\(program) has code symbols")
        let first = functions.first!.address, span = Double(functions.last!.address - first)
        let positions = functions.filter { named.contains(String($0.name)) }.map { Double($0.address - first) / span }.sorted()
        // This build (debug, unspecialized) has about a third of the release build's names.
        #expect(positions.count >= 500, "Linker/\(program).order names only \(positions.count) functions of this build: run Scripts/startup-order")
        let median = positions.isEmpty ? 1 : positions[positions.count / 2]
        #expect(median < 0.15, """
            the functions Linker/\(program).order names sit at a median \(Int(median * 100)) % into .text: \
            the order is not applied (Package.swift applies it where it links with lld: glibc 2.36 and ld.lld on PATH)
            """)
    }
}

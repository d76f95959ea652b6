import Foundation
import TestSupport
import Testing

/// The start-up order is in effect: lld laid out the functions `Linker/<program>.order` names at
/// the front of each program's `.text` (docs/performance.md, footprint), and the file still names
/// enough of the program's functions to matter. Without the order (a wrong path in Package.swift,
/// the flag dropped) the named functions sit all over the binary, a median 58 % into a debug
/// `bgctl`'s `.text`; with it, in the first few percent.
@Suite struct StartupOrderTests {
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

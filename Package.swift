// swift-tools-version: 6.1
import PackageDescription

#if canImport(Glibc)
import Glibc
#endif

/// How the programs users run are linked, for a small and quick start (docs/performance.md,
/// footprint). A statically linked Swift program exports every symbol of its own (the
/// toolchain's `static-stdlib-args.lnk` passes `-export-dynamic`): tens of thousands of dynamic
/// symbols that the runtime's start-up `dladdr` walks one by one, and nothing looks up by name.
/// Its 85 000 relative relocations take 2 MiB as RELA entries, all read at every start; lld packs
/// them (DT_RELR) into a few KiB, where this machine's lld and C library allow it.
///
/// Linked by lld, `program`'s code is also laid out by `Linker/<program>.order` (written by
/// `Scripts/startup-order`): the functions it runs from start to idle first, together. The kernel
/// maps a program's code 64 KiB around each page it touches, so start-up code scattered over 20 MB
/// of `.text` kept 10 MiB of an idle `bgtaskd`'s code resident; packed, 6 MiB.
@MainActor func leanStart(_ program: String) -> [LinkerSetting] {
    var flags = ["-Xlinker", "--no-export-dynamic"] + packedRelocations + staticCxxRuntime
    let order = "\(Context.packageDirectory)/Linker/\(program).order"
    #if canImport(Glibc)
    if !packedRelocations.isEmpty, access(order, R_OK) == 0 {
        // A function the file names that this build does not have (renamed, inlined) is skipped.
        flags += ["-Xlinker", "--symbol-ordering-file=\(order)", "-Xlinker", "--no-warn-symbol-ordering",
                  "-Xlinker", "-T", "-Xlinker", "\(Context.packageDirectory)/Linker/unnamed-first.ld"]
    }
    #endif
    return [.unsafeFlags(flags)]
}

/// Each function in a section of its own, so that the linker can lay them out one by one
/// (``leanStart(_:)``); without it a file's functions move as one block. Only for targets outside
/// the library products (TaskState, SchedulerCore, BackgroundTasks and what they use): a package
/// that depends on those may not carry unsafe flags.
let functionSections: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-function-sections"])]

/// The C++ runtime (libstdc++, libgcc) linked in, where the compiler's static copy is installed.
/// A program built with `--static-swift-stdlib` otherwise loads libstdc++.so for the Swift
/// runtime's few uses of it: the loader maps, relocates and binds the whole library at every start
/// (0.8 MiB resident in an idle `bgtaskd`, 0.5 ms of each `bgctl` run). The toolchain's
/// `static-stdlib-args.lnk` asks for `-lstdc++` before any flag of ours, so `Linker/static-cxx`,
/// searched first, answers it with a linker script naming the archive. Builds with the shared
/// Swift libraries never ask for `-lstdc++` (libswiftCore.so carries it), so the script is not
/// read there; `-static-libgcc` only keeps libgcc_s out of the programs' own needs.
var staticCxxRuntime: [String] {
    #if canImport(Glibc) && (arch(x86_64) || arch(arm64))
    var name = utsname()
    guard uname(&name) == 0 else { return [] }
    let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    // The compiler's own folder: the highest GCC version installed, as clang chooses it.
    let compilers = "/usr/lib/gcc/\(machine)-linux-gnu"
    guard let folder = opendir(compilers) else { return [] }
    defer { closedir(folder) }
    var newest: [Int] = []
    while let entry = readdir(folder) {
        let text = withUnsafeBytes(of: &entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let parts = text.split(separator: ".")
        let version = parts.compactMap { Int($0) }
        if !version.isEmpty, version.count == parts.count, newest.lexicographicallyPrecedes(version) { newest = version }
    }
    guard !newest.isEmpty,
          access("\(compilers)/\(newest.map(String.init).joined(separator: "."))/libstdc++.a", R_OK) == 0
    else { return [] }
    return ["-L", "\(Context.packageDirectory)/Linker/static-cxx", "-Xclang-linker", "-static-libgcc"]
    #else
    return []
    #endif
}

/// lld's packed relative relocations, when lld is on `PATH` (Swift's toolchains ship it beside
/// `swift`) and glibc reads them: from 2.36 on. A program built with them needs 2.36 to start.
var packedRelocations: [String] {
    #if canImport(Glibc)
    var text = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
    guard confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count) > 0 else { return [] }
    let version = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
    guard version.count >= 2, (version[0], version[1]) >= (2, 36) else { return [] }
    let path = getenv("PATH").map { String(cString: $0) } ?? ""
    guard path.split(separator: ":").contains(where: { access("\($0)/ld.lld", X_OK) == 0 }) else { return [] }
    return ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]
    #else
    return []
    #endif
}

let package = Package(
    name: "bgtop",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "bgtaskd", targets: ["bgtaskd"]),
        .executable(name: "bgctl", targets: ["bgctl"]),
        .executable(name: "bgbench", targets: ["bgbench"]),
        .executable(name: "bgtop", targets: ["bgtop"]),
        .library(name: "TaskState", targets: ["TaskState"]),
        .library(name: "SchedulerCore", targets: ["SchedulerCore"]),
        .library(name: "BackgroundTasks", targets: ["BackgroundTasks"]),
    ],
    traits: [
        .trait(name: "DemoExampleApp", description: "swift run bgtop --demo builds the scheduler and Stormy, the example app built with the BackgroundTasks library, that it runs (their libraries are linked into bgtop)"),
        .default(enabledTraits: ["DemoExampleApp"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // Linux calls that Glibc's Swift module does not export (signalfd, timerfd, pidfd).
        .target(name: "CLinuxSupport"),
        .target(
            name: "TaskState",
            dependencies: [
                "CLinuxSupport",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // TransferCore: the origin rule for secrets (``RequestOrigin``), a pure function.
        .target(name: "SchedulerCore", dependencies: ["TaskState", "TransferCore"]),
        // The state as Prometheus metrics (`bgctl metrics`, `bgtaskd --metrics`).
        .target(name: "StateMetrics", dependencies: ["TaskState", .product(name: "Prometheus", package: "swift-prometheus")], swiftSettings: functionSections),
        .target(
            name: "SchedulerRuntime",
            dependencies: [
                "SchedulerCore", "TaskState", "CLinuxSupport", "TransferEngine", "CSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                // HMAC-SHA256 of launch tokens (``LaunchKey``).
                .product(name: "Crypto", package: "swift-crypto"),
                // The push subscriptions' streams (``PushStream``).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: functionSections
        ),
        // The HTTP rules of transfers as pure functions (RFC 9110 ranges, validators, redirects,
        // Retry-After); no dependencies, so `Scripts/fuzz` can build it with libFuzzer.
        .target(name: "TransferCore"),
        // One attempt of a background download or upload at a time per transfer; the daemon schedules.
        .target(
            name: "TransferEngine",
            dependencies: [
                "TaskState", "TransferCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // SHA-256 of finished downloads (``ChecksumCheck``).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: functionSections
        ),
        // The app-side library, shaped like Apple's BackgroundTasks.
        .target(
            name: "BackgroundTasks",
            dependencies: [
                "TaskState", "CLinuxSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The dashboard: pure view and key handling over a cell grid; no terminal code.
        .target(name: "Dashboard", dependencies: ["TaskState"], swiftSettings: functionSections),
        // The state directory followed live (a mirror kept current by inotify, the event log's
        // tail) and `bgctl watch --json`'s lines: shared by bgtop and bgctl.
        .target(name: "StateFeed", dependencies: ["TaskState", "SchedulerCore"], swiftSettings: functionSections),
        // The dashboard's snapshot kept current from the state feed, change by change: bgtop's,
        // and bgbench's measure of it.
        .target(name: "DashboardFeed", dependencies: ["Dashboard", "StateFeed", "SchedulerCore", "TaskState"], swiftSettings: functionSections),
        // ncursesw, wide characters on; the shim header wraps what Swift cannot import. No pkgConfig:
        // its cflags (-D_XOPEN_SOURCE=600) are flags SwiftPM refuses, and the header is on the
        // default include path.
        .systemLibrary(name: "CNcurses", providers: [.apt(["libncursesw5-dev"])]),
        // libsystemd's sd-bus: the desktop's services (UPower, power-profiles-daemon, logind,
        // NetworkManager) as condition sources (``DesktopConditionSource``).
        // Its header comes from libsystemd-dev; the library is loaded on the first call (dlopen).
        .target(name: "CSystemd"),
        // Copies cell grids to the terminal and decodes keys; the only ncurses user.
        .target(name: "CursesTerminal", dependencies: ["CNcurses", "Dashboard"], swiftSettings: functionSections),
        .executableTarget(
            name: "bgtop",
            dependencies: [
                // bgtaskd (whose --demo bgtop --demo runs) and Stormy (the example app the demo
                // launches) are listed so that `swift run bgtop --demo` builds them: SwiftPM has no
                // build-only dependency between executables (plugins cannot build a product for
                // `swift run`), so this is the one way; nothing imports them. It links their
                // libraries into bgtop (the scheduler's, FoundationNetworking, libcurl and more),
                // so a build to install leaves them out: --disable-default-traits (docs/cli.md).
                "Dashboard", "DashboardFeed", "CursesTerminal", "CNcurses", "StateFeed", "SchedulerCore", "TaskState", "CLinuxSupport",
                .target(name: "bgtaskd", condition: .when(traits: ["DemoExampleApp"])),
                .target(name: "Stormy", condition: .when(traits: ["DemoExampleApp"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: functionSections,
            linkerSettings: leanStart("bgtop")
        ),
        .executableTarget(
            name: "bgtaskd",
            dependencies: [
                "SchedulerRuntime", "StateMetrics", "TaskState", "TransferEngine", "LoopbackServer", "CLinuxSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: functionSections,
            linkerSettings: leanStart("bgtaskd")
        ),
        .executableTarget(
            name: "bgctl",
            dependencies: [
                "SchedulerCore", "TaskState", "StateFeed", "CLinuxSupport", "StateMetrics",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: functionSections,
            linkerSettings: leanStart("bgctl")
        ),
        // Benchmarks against named peers (SQLite for durable writes); `swift run -c release bgbench`.
        .executableTarget(
            name: "bgbench",
            dependencies: [
                // bgtaskd, bgctl and bgtop are listed so that `swift run bgbench` builds the programs
                // it drives (no build-only dependency exists in SwiftPM; see bgtop above); none is imported.
                // TestSupport: the loopback sshd of the bgtop --host row.
                "SchedulerCore", "TaskState", "Dashboard", "DashboardFeed", "StateFeed", "CLinuxSupport", "LoopbackServer", "TortureCampaign", "TestSupport", "bgtaskd", "bgctl", "bgtop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The kill -9 campaign of `bgbench torture`: a library, so that an end-to-end test runs
        // the same campaign at a small size.
        .target(name: "TortureCampaign", dependencies: ["TaskState", "CLinuxSupport"]),
        // Examples of apps written with the library; `swift build` builds them.
        .executableTarget(
            name: "Stormy",
            dependencies: ["BackgroundTasks", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Stormy/Sources"
        ),
        .executableTarget(
            name: "Tidy",
            dependencies: ["BackgroundTasks", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Tidy/Sources"
        ),
        // An app whose modes are the behaviours the BackgroundTasks tests check.
        .executableTarget(name: "TaskAppFixture", dependencies: ["BackgroundTasks"], path: "Tests/TaskAppFixture"),
        // Starting the real binaries from tests: spawning with a clean signal mask, private state dirs.
        .target(name: "TestSupport", dependencies: ["TaskState", "CLinuxSupport"], path: "Tests/TestSupport"),
        // A loopback HTTP/1.1 file server and a loopback ntfy push server (PushTopicServer), both with
        // fault injection, for tests, benchmarks and `bgtop --demo`.
        .target(
            name: "LoopbackServer",
            dependencies: [
                "TaskState", "TransferCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: functionSections
        ),
        .testTarget(name: "TaskStateTests", dependencies: ["TaskState"]),
        .testTarget(name: "StateFeedTests", dependencies: ["StateFeed", "SchedulerCore", "TaskState"]),
        // Golden screens are read through #filePath, not bundled.
        .testTarget(name: "DashboardTests", dependencies: ["Dashboard", "DashboardFeed", "StateFeed", "SchedulerCore", "TaskState"], exclude: ["Golden"]),
        .testTarget(name: "SchedulerCoreTests", dependencies: ["SchedulerCore", "TaskState"]),
        .testTarget(name: "SchedulerRuntimeTests", dependencies: ["SchedulerRuntime", "SchedulerCore", "TaskState", "TestSupport"]),
        .testTarget(name: "TransferCoreTests", dependencies: ["TransferCore"]),
        .testTarget(name: "TransferEngineTests", dependencies: ["TransferEngine", "LoopbackServer", "TaskState", "TestSupport", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "CursesTerminalTests", dependencies: ["CursesTerminal", "Dashboard"]),
        // Drives the real binaries; depending on them makes `swift test` build them first.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TaskState", "SchedulerCore", "StateFeed", "CLinuxSupport", "TestSupport", "LoopbackServer", "TortureCampaign", "bgtaskd", "bgctl", "bgtop",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The library against the real scheduler and real app processes (the examples and the fixture).
        .testTarget(
            name: "BackgroundTasksTests",
            dependencies: [
                "TaskState", "CLinuxSupport", "TestSupport", "LoopbackServer", "bgtaskd", "bgctl", "Stormy", "Tidy", "TaskAppFixture",
                "BackgroundTasks", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ]
)

import Dashboard
import Foundation
import Testing

private func parsed(_ text: String, name: String = "t") throws -> Theme {
    try ThemeFile.parse(text, name: name).get()
}

private func parseError(_ text: String, name: String = "t") -> ThemeError? {
    if case let .failure(error) = ThemeFile.parse(text, name: name) { return error }
    return nil
}

/// The package's Themes/ folder, found from this file's path.
private let themesDirectory: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            return url.appendingPathComponent("Themes").path
        }
    }
    return "Themes"
}()

private func shippedThemeFiles() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: themesDirectory)
        .filter { $0.hasSuffix(".theme") }.sorted()
        .map { themesDirectory + "/" + $0 }
}

/// A fresh scratch directory, removed after `body`.
private func withScratchDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("bgtop-themes-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

private func write(_ text: String, to path: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                            withIntermediateDirectories: true)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}

@Suite("Theme file syntax")
struct ThemeFileSyntaxTests {
    @Test func everyValueForm() throws {
        let theme = try parsed("""
            theme[main_bg]="#1e2a3b"
            theme[main_fg]="#cc"
            theme[title]="255 128 0"
            theme[hi_fg]=""
            theme[inactive_fg]='#AbCdEf'
            theme[div_line]='7  8 9'
            """)
        #expect(theme.colors["main_bg"] == .rgb(0x1e, 0x2a, 0x3b))
        #expect(theme.colors["main_fg"] == .rgb(0xcc, 0xcc, 0xcc))
        #expect(theme.colors["title"] == .rgb(255, 128, 0))
        #expect(theme.colors["hi_fg"] == .terminalDefault)
        #expect(theme.colors["inactive_fg"] == .rgb(0xab, 0xcd, 0xef))
        #expect(theme.colors["div_line"] == .rgb(7, 8, 9))
        #expect(theme.colors.count == 6)
        #expect(theme.name == "t")
    }

    @Test func commentsBlankLinesAndSpacing() throws {
        let theme = try parsed("\u{FEFF}# header\n\n   # indented comment\r\n  theme[main_fg] = \"#10\"  \r\n"
            + "theme[ title ]\t=\t'#20' # trailing comment\n\ttheme[hi_fg]=#303030\n\n")
        #expect(theme.colors == ["main_fg": .rgb(16, 16, 16), "title": .rgb(32, 32, 32), "hi_fg": .rgb(48, 48, 48)])
    }

    @Test func laterLineWins() throws {
        let theme = try parsed("theme[title]=\"#10\"\ntheme[title]=\"#20\"")
        #expect(theme.colors["title"] == .rgb(32, 32, 32))
    }

    @Test func unknownKeysAreIgnored() throws {
        let theme = try parsed("""
            theme[gpu_box]="#123456"
            theme[future_thing]="not a colour at all"
            theme[main_fg]="#cc"
            """)
        #expect(theme.colors == ["main_fg": .rgb(204, 204, 204)])
    }

    @Test(arguments: ["#zzz", "#abc", "#1234567", "#", "1 2", "1 2 3 4", "256 0 0", "-1 0 0", "red", "1.5 2 3"])
    func badColourIsAnErrorWithLineNumber(value: String) throws {
        let text = "# comment\n\ntheme[main_fg]=\"#cc\"\ntheme[hi_fg]=\"\(value)\"\n"
        let error = try #require(parseError(text, name: "x"))
        #expect(error.line == 4)
        #expect(error.reason == .notAColor(key: "hi_fg", value: value))
        #expect(error.description.hasPrefix("theme 'x' line 4: '\(value)' is not a colour"))
        #expect(!error.description.contains("\n"))
    }

    @Test func malformedLinesAreErrors() throws {
        let garbage = try #require(parseError("theme[main_fg]=\"#cc\"\nmain_fg = #cc\n", name: "x"))
        #expect(garbage.line == 2)
        #expect(garbage.description.contains("theme 'x' line 2: expected theme[key]=\"value\""))

        let unterminated = try #require(parseError("\n\ntheme[title]=\"#cc\n"))
        #expect(unterminated.line == 3)
        #expect(unterminated.description.contains("missing closing quote"))

        let trailing = try #require(parseError("theme[title]=\"#cc\" extra"))
        #expect(trailing.line == 1)
        #expect(trailing.reason == .malformedLine("theme[title]=\"#cc\" extra"))

        #expect(parseError("theme[title]") != nil)
        #expect(parseError("theme[title \"#cc\"") != nil)
    }

    @Test func anEmptyFileIsAThemeOfDefaults() throws {
        let theme = try parsed("")
        #expect(theme.colors.isEmpty)
        #expect(theme.color("main_fg") == Theme.builtInDefault.color("main_fg"))
    }
}

@Suite("Theme lookups")
struct ThemeLookupTests {
    @Test func missingKeysFallBackToTheDefault() throws {
        let theme = try parsed("theme[main_fg]=\"#12\"")
        #expect(theme.color("main_fg") == .rgb(18, 18, 18))
        for key in Theme.keys where key != "main_fg" {
            #expect(theme.color(key) == Theme.builtInDefault.color(key), "\(key)")
        }
        #expect(theme.color("no_such_key") == .terminalDefault)
    }

    @Test func anExplicitEmptyValueIsTheTerminalDefault() throws {
        let theme = try parsed("theme[main_bg]=\"\"")
        #expect(theme.color("main_bg") == .terminalDefault)
    }

    @Test func btopDerivedFallbacks() throws {
        let theme = try parsed("theme[inactive_fg]=\"#44\"\ntheme[cpu_start]=\"#010203\"\ntheme[cpu_end]=\"#040506\"")
        #expect(theme.color("meter_bg") == .rgb(0x44, 0x44, 0x44))
        #expect(theme.color("graph_text") == .rgb(0x44, 0x44, 0x44))
        #expect(theme.color("process_start") == .rgb(1, 2, 3))
        #expect(theme.color("process_end") == .rgb(4, 5, 6))
    }

    @Test func gradientEndpointsAndMiddle() {
        let theme = Theme(name: "g", colors: [
            "temp_start": .rgb(0, 0, 0), "temp_mid": .rgb(100, 200, 50), "temp_end": .rgb(200, 0, 250),
        ])
        #expect(theme.gradient("temp", at: 0) == .rgb(0, 0, 0))
        #expect(theme.gradient("temp", at: 0.5) == .rgb(100, 200, 50))
        #expect(theme.gradient("temp", at: 1) == .rgb(200, 0, 250))
        #expect(theme.gradient("temp", at: 0.25) == .rgb(50, 100, 25))
        #expect(theme.gradient("temp", at: 0.75) == .rgb(150, 100, 150))
        #expect(theme.gradient("temp", at: -3) == .rgb(0, 0, 0))
        #expect(theme.gradient("temp", at: 7) == .rgb(200, 0, 250))
        #expect(theme.gradient("temp", at: .nan) == .rgb(0, 0, 0))
    }

    @Test func gradientWithoutMiddleOrEnd() throws {
        let twoColour = try parsed("theme[upload_start]=\"#00\"\ntheme[upload_mid]=\"\"\ntheme[upload_end]=\"#c8\"")
        #expect(twoColour.gradient("upload", at: 0.5) == .rgb(100, 100, 100))
        let noMidKey = try parsed("theme[upload_start]=\"#00\"\ntheme[upload_end]=\"#c8\"")
        #expect(noMidKey.gradient("upload", at: 0.5) == .rgb(100, 100, 100))
        let single = try parsed("theme[upload_start]=\"#40\"\ntheme[upload_mid]=\"\"\ntheme[upload_end]=\"\"")
        #expect(single.gradient("upload", at: 0.9) == .rgb(64, 64, 64))
        #expect(single.gradient("nonsense", at: 0.5) == .terminalDefault)
        #expect(Theme.monochrome.gradient("temp", at: 0.5) == .terminalDefault)
        #expect(Theme.builtInDefault.gradient("temp", at: 0) == Theme.builtInDefault.color("temp_start"))
        #expect(Theme.builtInDefault.gradient("temp", at: 1) == Theme.builtInDefault.color("temp_end"))
    }

    @Test func monochrome() throws {
        #expect(Theme.monochrome.isMonochrome)
        #expect(Theme.monochrome.name == "monochrome")
        #expect(!Theme.builtInDefault.isMonochrome)
        #expect(Theme.keys.allSatisfy { Theme.monochrome.color($0) == .terminalDefault })
        #expect(try !parsed("theme[main_fg]=\"\"").isMonochrome)
    }

    @Test func builtInDefaultIsComplete() {
        #expect(Theme.keys.count == 42)
        #expect(Set(Theme.builtInDefault.colors.keys) == Set(Theme.keys))
        #expect(Theme.builtInDefault.name == "default")
    }
}

@Suite("Theme files")
struct ThemeFilesTests {
    @Test func shippedThemesParseAndAreComplete() throws {
        let files = try shippedThemeFiles()
        let names = files.map { (($0 as NSString).lastPathComponent as NSString).deletingPathExtension }
        for required in ["default", "light", "high-contrast", "monochrome"] {
            #expect(names.contains(required), "Themes/\(required).theme is missing")
        }
        let reference = try ThemeCatalog.loadFile(themesDirectory + "/default.theme").get()
        #expect(Set(reference.colors.keys) == Set(Theme.keys))
        for file in files {
            let theme = try ThemeCatalog.loadFile(file).get()
            let missing = Set(reference.colors.keys).subtracting(theme.colors.keys)
            #expect(missing.isEmpty, "\(file) lacks \(missing.sorted())")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.hasPrefix("#"), "\(file) needs a header comment")
        }
    }

    @Test func defaultFileMatchesTheCompiledInDefault() throws {
        let file = try ThemeCatalog.loadFile(themesDirectory + "/default.theme").get()
        #expect(file == Theme.builtInDefault)
    }

    @Test func monochromeFileIsMonochrome() throws {
        let file = try ThemeCatalog.loadFile(themesDirectory + "/monochrome.theme").get()
        #expect(file.isMonochrome)
        #expect(file.colors == Theme.monochrome.colors)
        #expect(try !ThemeCatalog.loadFile(themesDirectory + "/high-contrast.theme").get().isMonochrome)
    }

    @Test func btopDefaultThemeLoads() throws {
        let theme = try parsed(BtopThemeFixtures.defaultSample, name: "btop-default")
        #expect(Set(theme.colors.keys) == Set(Theme.keys))
        #expect(theme.color("main_bg") == .rgb(0, 0, 0))
        #expect(theme.color("selected_bg") == .rgb(0x7e, 0x26, 0x26))
        #expect(theme.color("proc_misc") == .rgb(0x0d, 0xe7, 0x56))
        #expect(theme.gradient("temp", at: 0.5) == .rgb(0x54, 0x74, 0xe8))
    }

    @Test func btopGreyscaleThemeLoads() throws {
        let theme = try parsed(BtopThemeFixtures.greyscale, name: "greyscale")
        #expect(theme.color("main_bg") == .rgb(0, 0, 0))
        #expect(theme.color("selected_bg") == .rgb(255, 255, 255))
        #expect(theme.color("temp_mid") == .terminalDefault)
        #expect(theme.gradient("temp", at: 0.5) == .rgb(0xa8, 0xa8, 0xa8))
        #expect(theme.color("meter_bg") == .rgb(0x30, 0x30, 0x30))
    }

    @Test func btopNordThemeLoads() throws {
        let theme = try parsed(BtopThemeFixtures.nord, name: "nord")
        #expect(theme.color("main_bg") == .rgb(0x2e, 0x34, 0x40))
        #expect(theme.color("title") == .rgb(0x8f, 0xbc, 0xbb))
        #expect(theme.color("graph_text") == theme.color("inactive_fg"))
        #expect(theme.color("process_mid") == .rgb(0x88, 0xc0, 0xd0))
    }
}

@Suite("Theme catalog")
struct ThemeCatalogTests {
    @Test func userDirectoryWinsOverPackageDirectory() throws {
        try withScratchDirectory { root in
            let user = root + "/config/bgtop/themes", package = root + "/package/Themes"
            try write("theme[main_fg]=\"#11\"", to: user + "/mine.theme")
            try write("theme[main_fg]=\"#22\"", to: package + "/mine.theme")
            try write("theme[main_fg]=\"#33\"", to: package + "/other.theme")
            try write("theme[main_fg]=\"#44\"", to: user + "/default.theme")
            let catalog = ThemeCatalog(searchDirectories: [user, root + "/missing", package])
            let mine = try catalog.load("mine").get()
            #expect(mine.color("main_fg") == .rgb(0x11, 0x11, 0x11))
            #expect(mine.name == "mine")
            #expect(try catalog.load("other").get().color("main_fg") == .rgb(0x33, 0x33, 0x33))
            #expect(try catalog.load("default").get().color("main_fg") == .rgb(0x44, 0x44, 0x44))
            #expect(try catalog.load("mono").get() == Theme.monochrome)
            #expect(try catalog.load("monochrome").get() == Theme.monochrome)
            #expect(catalog.availableNames() == ["default", "mine", "monochrome", "other"])
        }
    }

    @Test func compiledInThemesWithoutDirectories() throws {
        let catalog = ThemeCatalog(searchDirectories: [])
        #expect(try catalog.load("default").get() == Theme.builtInDefault)
        #expect(try catalog.load("mono").get() == Theme.monochrome)
        #expect(catalog.availableNames() == ["default", "monochrome"])
    }

    @Test func pathForm() throws {
        try withScratchDirectory { root in
            try write("theme[title]=\"1 2 3\"", to: root + "/some where/cool.theme")
            try write("theme[title]=\"4 5 6\"", to: root + "/plain")
            let catalog = ThemeCatalog(searchDirectories: [])
            let cool = try catalog.load(root + "/some where/cool.theme").get()
            #expect(cool.name == "cool")
            #expect(cool.color("title") == .rgb(1, 2, 3))
            #expect(try catalog.load(root + "/plain").get().color("title") == .rgb(4, 5, 6))
            let missing = try #require(catalog.load(root + "/nope.theme").failure)
            #expect(missing.description.contains("no such file"))
            #expect(catalog.load(root).failure?.description.contains("directory") == true)
            // A bare NAME.theme that is not in the current directory is found in the search directories.
            let inDirectory = ThemeCatalog(searchDirectories: [root + "/some where"])
            #expect(try inDirectory.load("cool.theme").get().color("title") == .rgb(1, 2, 3))
        }
    }

    @Test func aFIFOAHugeFileAndALinkAsThemes() throws {
        try withScratchDirectory { root in
            // A FIFO is refused at once, not waited on for a writer; past 1 MiB is too big.
            #expect(mkfifo(root + "/pipe.theme", 0o600) == 0)
            let fifo = try #require(ThemeCatalog.loadFile(root + "/pipe.theme").failure)
            #expect(fifo.description.contains("not a regular file"), "\(fifo)")
            try Data(count: (1 << 20) + 1).write(to: URL(fileURLWithPath: root + "/huge.theme"))
            let huge = try #require(ThemeCatalog.loadFile(root + "/huge.theme").failure)
            #expect(huge.description.contains("too big for a theme file (\((1 << 20) + 1) bytes)"), "\(huge)")
            // A theme kept elsewhere (a dotfiles folder) and linked in is read.
            try write("theme[title]=\"7 8 9\"", to: root + "/dotfiles/linked.theme")
            #expect(symlink(root + "/dotfiles/linked.theme", root + "/linked.theme") == 0)
            #expect(try ThemeCatalog.loadFile(root + "/linked.theme").get().color("title") == .rgb(7, 8, 9))
        }
    }

    @Test func unknownNameListsWhatIsAvailable() throws {
        try withScratchDirectory { root in
            try write("", to: root + "/zebra.theme")
            try write("", to: root + "/alpha.theme")
            let error = try #require(ThemeCatalog(searchDirectories: [root]).load("nosuch").failure)
            #expect(error.description == "unknown theme 'nosuch'; available: alpha, default, monochrome, zebra")
            #expect(ThemeCatalog(searchDirectories: [root]).load("").failure != nil)
        }
    }

    @Test func brokenFileGivesItsParseError() throws {
        try withScratchDirectory { root in
            try write("# ok\ntheme[main_fg]=\"#zzz\"\n", to: root + "/broken.theme")
            let error = try #require(ThemeCatalog(searchDirectories: [root]).load("broken").failure)
            #expect(error.line == 2)
            #expect(error.description.contains("theme 'broken'"))
            #expect(error.description.contains("line 2: '#zzz' is not a colour"))
            #expect(error.description.contains(root + "/broken.theme"))
        }
    }

    @Test func defaultSearchDirectories() throws {
        let installed = ThemeCatalog.defaultSearchDirectories(
            environment: ["XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"], executablePath: "/usr/local/bin/bgtop")
        #expect(installed == ["/xdg/bgtop/themes", "/usr/local/share/bgtop/themes"])
        let noXDG = ThemeCatalog.defaultSearchDirectories(environment: ["HOME": "/home/u"], executablePath: "/opt/bin/bgtop")
        #expect(noXDG == ["/home/u/.config/bgtop/themes", "/opt/share/bgtop/themes"])
        try withScratchDirectory { root in
            try write("// swift-tools-version: 6.1", to: root + "/Package.swift")
            try write("", to: root + "/Themes/extra.theme")
            try write("", to: root + "/.build/x86_64-unknown-linux-gnu/debug/bgtop")
            let found = ThemeCatalog.defaultSearchDirectories(
                environment: [:], executablePath: root + "/.build/x86_64-unknown-linux-gnu/debug/bgtop")
            #expect(found.last.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
                    == URL(fileURLWithPath: root + "/Themes").resolvingSymlinksInPath().path)
            #expect(found.count == 2)
            #expect(ThemeCatalog(searchDirectories: found).availableNames().contains("extra"))
        }
    }

    @Test func bareExecutableNameIsFoundInPATHAndLinksAreFollowed() throws {
        try withScratchDirectory { root in
            let real = root + "/opt/bgtop/bin/bgtop"
            try write("#!/bin/sh\n", to: real)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: real)
            try FileManager.default.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: root + "/bin/bgtop", withDestinationPath: real)
            let found = ThemeCatalog.defaultSearchDirectories(
                environment: ["PATH": "/nonexistent:" + root + "/bin"], executablePath: "bgtop")
            let resolvedRoot = URL(fileURLWithPath: root).resolvingSymlinksInPath().path
            #expect(found.first == root + "/share/bgtop/themes" || found.first == resolvedRoot + "/share/bgtop/themes")
            #expect(found.last == resolvedRoot + "/opt/bgtop/share/bgtop/themes")
            #expect(ThemeCatalog.defaultSearchDirectories(environment: ["PATH": "/nonexistent"], executablePath: "bgtop") == [])
        }
    }

    @Test func nameOnTheCommandLineFindsShippedThemes() throws {
        let catalog = ThemeCatalog(searchDirectories: [themesDirectory])
        for name in ["default", "light", "high-contrast", "monochrome"] {
            #expect(throws: Never.self) { try catalog.load(name).get() }
        }
        #expect(try catalog.load("monochrome").get().isMonochrome)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case let .failure(error) = self { return error }
        return nil
    }
}

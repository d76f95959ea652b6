import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

@Suite("App manifests")
struct ManifestCatalogTests {
    private func manifestJSON(id: String, executable: String, signal: String? = nil) -> String {
        var fields = [
            "\"id\": \"\(id)\"", "\"executable\": \"\(executable)\"",
            "\"permittedIdentifiers\": [\"\(id).refresh\", \"\(id).cleanup\"]",
            "\"backgroundModes\": [\"fetch\"]",
        ]
        if let signal { fields.append("\"expirationSignal\": \"\(signal)\"") }
        return "{\(fields.joined(separator: ", "))}"
    }

    @Test func goodManifestsLoadAndBadOnesAreListedWithReasons() throws {
        try withTemporaryDirectory { dir in
            let notExecutable = "\(dir)/not-executable.sh"
            try writeText("#!/bin/sh\n", to: notExecutable)
            #expect(chmod(notExecutable, 0o644) == 0)
            let files: [String: String] = [
                "com.example.good.json": manifestJSON(id: "com.example.good", executable: "/bin/sh"),
                "com.example.term.json": manifestJSON(id: "com.example.term", executable: "/bin/sh", signal: "term"),
                "com.example.relative.json": manifestJSON(id: "com.example.relative", executable: "bin/app"),
                "com.example.missing.json": manifestJSON(id: "com.example.missing", executable: "\(dir)/no-such-program"),
                "com.example.noexec.json": manifestJSON(id: "com.example.noexec", executable: notExecutable),
                "com.example.renamed.json": manifestJSON(id: "com.example.other", executable: "/bin/sh"),
                "com.example.broken.json": "{\"id\": \"com.example.broken\", ",
                "com.example.signal.json": manifestJSON(id: "com.example.signal", executable: "/bin/sh", signal: "SIGFOO"),
                "com.example.badid.json": manifestJSON(id: "../evil", executable: "/bin/sh"),
                "README.txt": "not a manifest",
            ]
            for (name, text) in files { try writeText(text, to: "\(dir)/\(name)") }

            let catalog = ManifestCatalog.load(from: dir)
            #expect(Set(catalog.manifests.keys) == [ident("com.example.good"), ident("com.example.term")])
            let good = try #require(catalog.manifests[ident("com.example.good")])
            #expect(good.executable == "/bin/sh")
            #expect(good.arguments == [])
            #expect(good.expirationSignal == "SIGUSR1")
            #expect(good.backgroundModes == [.fetch])
            #expect(catalog.manifests[ident("com.example.term")]?.expirationSignal == "term")

            let reasons = Dictionary(uniqueKeysWithValues: catalog.problems.map { ($0.file, $0.reason) })
            #expect(reasons.count == 7, "\(reasons)")
            #expect(reasons["README.txt"] == nil)
            #expect(reasons["com.example.relative.json"] == "executable 'bin/app' is not an absolute path")
            #expect(reasons["com.example.missing.json"] == "executable '\(dir)/no-such-program' is missing or not executable")
            #expect(reasons["com.example.noexec.json"] == "executable '\(notExecutable)' is missing or not executable")
            #expect(reasons["com.example.renamed.json"]
                    == "file is named 'com.example.renamed.json' but its id is 'com.example.other'; name it 'com.example.other.json'")
            #expect(reasons["com.example.broken.json"]?.contains("not valid JSON") == true)
            #expect(reasons["com.example.signal.json"] == "expirationSignal 'SIGFOO' is not a signal name")
            #expect(reasons["com.example.badid.json"]?.contains("starts with '.'") == true, "\(reasons)")
        }
    }

    @Test func aMissingFolderIsAnEmptyCatalog() throws {
        try withTemporaryDirectory { dir in
            let catalog = ManifestCatalog.load(from: "\(dir)/apps")
            #expect(catalog == ManifestCatalog())
        }
    }

    @Test func aFileInPlaceOfTheFolderIsAProblem() throws {
        try withTemporaryDirectory { dir in
            try writeText("", to: "\(dir)/apps")
            let catalog = ManifestCatalog.load(from: "\(dir)/apps")
            #expect(catalog.manifests.isEmpty)
            #expect(catalog.problems.count == 1)
            #expect(catalog.problems.first?.file == "\(dir)/apps")
        }
    }

    @Test func permitsChecksIdentifierAndBackgroundMode() {
        let manifest = AppManifest(id: ident("com.a"), executable: "/bin/true",
                                   permittedIdentifiers: [ident("refresh"), ident("sync")], backgroundModes: [.fetch])
        #expect(manifest.permits(ident("refresh"), kind: .appRefresh))
        #expect(!manifest.permits(ident("refresh"), kind: .processing), "no processing mode")
        #expect(!manifest.permits(ident("other"), kind: .appRefresh))
        #expect(manifest.permits(ident("sync"), kind: .finishing), "finishing needs no mode")
    }

    @Test func signalNames() {
        #expect(SignalName.number(of: "SIGUSR1") == SIGUSR1)
        #expect(SignalName.number(of: "usr2") == SIGUSR2)
        #expect(SignalName.number(of: "TERM") == SIGTERM)
        #expect(SignalName.number(of: "sigHup") == SIGHUP)
        #expect(SignalName.number(of: "SIGFOO") == nil)
        #expect(SignalName.number(of: "SIG") == nil)
        #expect(SignalName.number(of: "") == nil)
    }

    @Test func taskKindsAndModes() {
        #expect(TaskKind.appRefresh.requiredBackgroundMode == .fetch)
        #expect(TaskKind.processing.requiredBackgroundMode == .processing)
        #expect(TaskKind.finishing.requiredBackgroundMode == nil)
        #expect(TaskKind.appRefresh < .processing && TaskKind.processing < .finishing)
    }
}

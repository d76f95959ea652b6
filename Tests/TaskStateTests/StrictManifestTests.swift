import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// sshd's StrictModes for manifests and the programs they name: what others could have written
/// is refused with one line, and a good manifest beside it still loads. Runs as root in CI, so
/// "owned by someone else" is made real with `chown` to `nobody` (uid 65534).
@Suite("Strict manifests")
struct StrictManifestTests {
    private static let nobody: uid_t = 65534

    private func manifestJSON(id: String, executableJSON: String) -> String {
        #"{"id": "\#(id)", "executable": \#(executableJSON), "permittedIdentifiers": ["\#(id).refresh"], "backgroundModes": ["fetch"]}"#
    }

    /// A 0755 script owned by the test's user.
    private func script(_ path: String) throws -> String {
        try writeText("#!/bin/sh\nexit 0\n", to: path)
        #expect(chmod(path, 0o755) == 0)
        return path
    }

    @Test func untrustedManifestsAndProgramsAreRefusedBesideAGoodOne() throws {
        try #require(geteuid() == 0, "chown to nobody needs root")
        try withTemporaryDirectory { root in
            let apps = root + "/apps"
            #expect(mkdir(apps, 0o755) == 0)
            let good = try script(root + "/good.sh")
            let worldWritableProgram = try script(root + "/ww.sh")
            #expect(chmod(worldWritableProgram, 0o777) == 0)
            let groupWritableProgram = try script(root + "/gw.sh")
            #expect(chmod(groupWritableProgram, 0o775) == 0)
            let othersProgram = try script(root + "/nobody.sh")
            #expect(chown(othersProgram, Self.nobody, Self.nobody) == 0)
            let executables: [String: String] = [
                "com.example.good": "\"\(good)\"",
                "com.example.ownedbynobody": "\"\(good)\"",
                "com.example.worldwritable": "\"\(good)\"",
                "com.example.groupwritable": "\"\(good)\"",
                "com.example.directory": "\"\(root)\"",
                "com.example.nul": "\"\(good)\\u0000junk\"",
                "com.example.relative": "\"bin/app\"",
                "com.example.wwprogram": "\"\(worldWritableProgram)\"",
                "com.example.gwprogram": "\"\(groupWritableProgram)\"",
                "com.example.nobodyprogram": "\"\(othersProgram)\"",
            ]
            for (id, executable) in executables {
                try writeText(manifestJSON(id: id, executableJSON: executable), to: "\(apps)/\(id).json")
            }
            #expect(chown("\(apps)/com.example.ownedbynobody.json", Self.nobody, Self.nobody) == 0)
            #expect(chmod("\(apps)/com.example.worldwritable.json", 0o666) == 0)
            #expect(chmod("\(apps)/com.example.groupwritable.json", 0o664) == 0)

            let catalog = ManifestCatalog.load(from: apps)
            #expect(Array(catalog.manifests.keys) == [ident("com.example.good")])
            let reasons = Dictionary(uniqueKeysWithValues: catalog.problems.map { ($0.file, $0.reason) })
            #expect(reasons.count == executables.count - 1, "\(reasons)")
            func reason(_ id: String) -> String? { reasons["\(id).json"] }
            #expect(reason("com.example.ownedbynobody") == "\(apps)/com.example.ownedbynobody.json is owned by uid 65534, not by you (uid 0) or root")
            #expect(reason("com.example.worldwritable")
                    == "\(apps)/com.example.worldwritable.json is writable by group or others (mode 0666); run: chmod go-w \(apps)/com.example.worldwritable.json")
            #expect(reason("com.example.groupwritable")
                    == "\(apps)/com.example.groupwritable.json is writable by group or others (mode 0664); run: chmod go-w \(apps)/com.example.groupwritable.json")
            #expect(reason("com.example.directory") == "executable '\(root)' is a directory, not a regular file")
            #expect(reason("com.example.nul") == "executable '\(good)\\0junk' contains a NUL byte")
            #expect(reason("com.example.relative") == "executable 'bin/app' is not an absolute path")
            #expect(reason("com.example.wwprogram")
                    == "executable '\(worldWritableProgram)' is writable by group or others (mode 0777); run: chmod go-w \(worldWritableProgram)")
            #expect(reason("com.example.gwprogram")
                    == "executable '\(groupWritableProgram)' is writable by group or others (mode 0775); run: chmod go-w \(groupWritableProgram)")
            #expect(reason("com.example.nobodyprogram") == "executable '\(othersProgram)' is owned by uid 65534, not by you (uid 0) or root")
            for problem in catalog.problems { #expect(!problem.reason.contains("\n") && !problem.reason.contains("\0")) }
        }
    }

    @Test func aLinkedManifestIsJudgedByTheFileItPointsTo() throws {
        try #require(geteuid() == 0, "chown to nobody needs root")
        try withTemporaryDirectory { root in
            let apps = root + "/apps"
            #expect(mkdir(apps, 0o755) == 0)
            let kept = root + "/com.example.linked.json"
            try writeText(manifestJSON(id: "com.example.linked", executableJSON: "\"/bin/sh\""), to: kept)
            #expect(chown(kept, Self.nobody, Self.nobody) == 0)
            #expect(symlink(kept, apps + "/com.example.linked.json") == 0)
            let catalog = ManifestCatalog.load(from: apps)
            #expect(catalog.manifests.isEmpty)
            #expect(catalog.problems.map(\.reason) == ["\(apps)/com.example.linked.json is owned by uid 65534, not by you (uid 0) or root"])
        }
    }

    @Test func aGroupWritableAppsDirectoryRefusesEveryManifestInIt() throws {
        try withTemporaryDirectory { root in
            let apps = root + "/apps"
            #expect(mkdir(apps, 0o755) == 0)
            try writeText(manifestJSON(id: "com.example.good", executableJSON: "\"/bin/sh\""), to: apps + "/com.example.good.json")
            #expect(ManifestCatalog.load(from: apps).manifests.count == 1)
            #expect(chmod(apps, 0o775) == 0)
            let catalog = ManifestCatalog.load(from: apps)
            #expect(catalog.manifests.isEmpty)
            #expect(catalog.problems == [ManifestProblem(
                file: apps, reason: "apps directory \(apps) is writable by group or others (mode 0775); run: chmod go-w \(apps)")])
        }
    }
}

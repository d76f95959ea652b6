import Foundation
import Testing

/// Replays the seed corpus of TaskState's fuzz targets (`Fuzz/corpus/<target>/`, which keeps
/// every crash found) through the same bodies `Scripts/fuzz` runs, so a fixed crash stays fixed
/// without a fuzzer.
@Suite("State fuzz corpus replay")
struct FuzzCorpusTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fuzz").standardized.path

    /// The targets `Fuzz/targets` lists for `module`.
    static func listed(module: String) throws -> [String] {
        let text = try String(contentsOfFile: fuzz + "/targets", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 2, !line.hasPrefix("#"), fields[1] == module else { return nil }
            return String(fields[0])
        }
    }

    @Test("every TaskState target is listed, has a seed corpus and an entry point, and every input passes its checks")
    func replay() throws {
        let targets = try Self.listed(module: "TaskState")
        #expect(Set(targets) == Set(StateFuzzTargets.all.keys))
        var inputs = 0
        for name in targets {
            let target = try #require(StateFuzzTargets.all[name])
            #expect(FileManager.default.fileExists(atPath: Self.fuzz + "/entry/\(name).swift"), "no entry point for \(name)")
            let folder = Self.fuzz + "/corpus/" + name
            let files = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(files.count >= 5, "\(name) has a seed corpus")
            for file in files {
                let data = try #require(FileManager.default.contents(atPath: "\(folder)/\(file)"))
                target(Array(data))
                inputs += 1
            }
        }
        #expect(inputs >= 30)
    }
}

import Foundation
import Testing

/// Replays the fuzzers' seed corpus (`Fuzz/corpus/<target>/`, which keeps every crash found)
/// through the same bodies `Scripts/fuzz` runs, so a fixed crash stays fixed without a fuzzer.
@Suite("Fuzz corpus replay")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fuzz/corpus").standardized.path

    @Test("every target has a seed corpus and an entry point, and every input passes its checks")
    func replay() throws {
        // Fuzz/targets names each corpus folder's module; TaskState's are replayed by TaskStateTests.
        let listed = try String(contentsOfFile: Self.corpus + "/../targets", encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").map(String.init) }
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.corpus).sorted()
        #expect(Set(folders) == Set(listed.compactMap(\.first)), "every corpus folder is listed in Fuzz/targets")
        let mine = listed.filter { $0.count == 2 && $0[1] == "TransferCore" }.map { $0[0] }.sorted()
        #expect(Set(mine) == Set(FuzzTargets.all.keys))
        var inputs = 0
        for folder in mine {
            let target = try #require(FuzzTargets.all[folder])
            let entry = Self.corpus + "/../entry/\(folder).swift"
            #expect(FileManager.default.fileExists(atPath: entry), "no entry point for \(folder)")
            for name in try FileManager.default.contentsOfDirectory(atPath: Self.corpus + "/" + folder) {
                let data = try #require(FileManager.default.contents(atPath: Self.corpus + "/\(folder)/\(name)"))
                target(Array(data))
                inputs += 1
            }
        }
        #expect(inputs >= 20)
    }
}

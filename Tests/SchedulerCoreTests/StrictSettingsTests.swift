import Foundation
import Testing
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// StrictModes for `settings.json`: a file others could have written is a bad settings file.
@Suite("Strict settings")
struct StrictSettingsTests {
    private func loadError(chmod mode: mode_t? = nil, chownToNobody: Bool = false) throws -> String? {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bgtop-settings-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = SchedulerSettings.path(inConfig: dir)
        try Data(#"{"appRefreshBudgetSeconds": 20}"#.utf8).write(to: URL(fileURLWithPath: path))
        if let mode { #expect(chmod(path, mode) == 0) }
        if chownToNobody { #expect(chown(path, 65534, 65534) == 0) }
        do throws(SettingsError) {
            #expect(try SchedulerSettings.load(configDirectory: dir).appRefreshBudgetSeconds == 20)
            return nil
        } catch {
            return error.description.replacingOccurrences(of: dir, with: "<config>")
        }
    }

    @Test func aSettingsFileOthersCanWriteIsRefused() throws {
        #expect(try loadError() == nil)
        #expect(try loadError(chmod: 0o644) == nil)
        #expect(try loadError(chmod: 0o666) == "<config>/settings.json: <config>/settings.json is writable by group or others (mode 0666); run: chmod go-w <config>/settings.json")
        #expect(try loadError(chmod: 0o620) == "<config>/settings.json: <config>/settings.json is writable by group or others (mode 0620); run: chmod go-w <config>/settings.json")
    }

    @Test func aSettingsFileOwnedBySomeoneElseIsRefused() throws {
        try #require(geteuid() == 0, "chown to nobody needs root")
        #expect(try loadError(chownToNobody: true) == "<config>/settings.json: <config>/settings.json is owned by uid 65534, not by you (uid 0) or root")
    }
}

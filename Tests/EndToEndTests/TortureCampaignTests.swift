import Foundation
import TestSupport
import Testing
import TortureCampaign

/// The standing `kill -9` campaign (`bgbench torture`) at CI size: the same code, a few rounds.
@Suite struct TortureCampaignTests {
    @Test func killNineRestartsUnderRandomCommandsLoseDoubleAndOrphanNothing() throws {
        let parent = FileManager.default.temporaryDirectory.path
        // A fixed seed draws the same commands and kill moments every run; what the processes
        // make of them still varies with timing.
        var campaign = TortureCampaign(rounds: 4, seed: 11, binaries: TestEnvironment.binaries, parent: parent)
        campaign.roundSeconds = 0.3...1.5
        let report = try campaign.run()
        let summary = report.text
        #expect(report.rounds == 4 && report.restarts == 4, "\(summary)")
        #expect(report.commands >= 8, "the campaign issued commands: \(summary)")
        #expect(report.appLaunches >= 1, "some launches happened: \(summary)")
        for kind in TortureReport.Kind.allCases {
            #expect(report.count(kind) == 0, "\(kind.rawValue): \(summary)")
        }
        // The campaign ends every process it or the scheduler started, and removes its folder.
        #expect(!FileManager.default.fileExists(atPath: report.folder))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { entry in
            guard let pid = Int32(entry), let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return String(decoding: environment, as: UTF8.self).contains("BGTASK_STATE_DIR=\(report.folder)/state")
        }
        #expect(leftovers.isEmpty, "processes of the campaign's state folder still run: \(leftovers)")
    }
}

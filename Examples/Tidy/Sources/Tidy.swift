import ArgumentParser
import BackgroundTasks
import Foundation
import Synchronization

/// Tidy empties a cache folder in the background, a chunk of files at a time, only while the
/// machine is on external power. When its runtime runs out it stops between two chunks, reports
/// what is left and asks to be run again.
///
/// It uses the callback API (`register(forTaskWithIdentifier:using:launchHandler:)` with an
/// `expirationHandler`), the shape most existing BackgroundTasks code has.
@main
struct Tidy: AsyncParsableCommand {
    static let appID = "com.example.tidy"
    static let cleanIdentifier = "com.example.tidy.clean"

    static let configuration = CommandConfiguration(abstract: "Empties a cache folder in the background, in chunks, on external power.")

    @Option(name: .long, help: "The folder to empty.")
    var folder: String

    @Option(name: .long, help: "Files removed per chunk.")
    var chunk = 100

    @Option(name: .long, help: "Pause after each chunk, in milliseconds (keeps the disk quiet for others).")
    var pause = 0

    @Flag(name: .long, help: "Ask for a clean-up (what the app's settings screen would do).")
    var schedule = false

    func run() async throws {
        let scheduler = BGTaskScheduler.shared
        let job = CleanJob(folder: folder, chunk: max(1, chunk), pause: pause)
        scheduler.register(forTaskWithIdentifier: Tidy.cleanIdentifier, using: nil) { task in
            job.run(task as! BGProcessingTask)
        }
        if schedule {
            try Tidy.scheduleCleaning()
            print("Tidy: clean-up of \(folder) scheduled for the next time the machine is on power and idle")
        }
        await scheduler.runUntilComplete()
    }

    static func scheduleCleaning() throws {
        let request = BGProcessingTaskRequest(identifier: cleanIdentifier)
        request.requiresExternalPower = true
        request.requiresNetworkConnectivity = false
        try BGTaskScheduler.shared.submit(request)
    }
}

/// One clean-up run: removes files a chunk at a time and stops between chunks once expired.
final class CleanJob: Sendable {
    let folder: String
    let chunk: Int
    let pause: Int
    private let expired = Atomic<Bool>(false)

    init(folder: String, chunk: Int, pause: Int) {
        self.folder = folder
        self.chunk = chunk
        self.pause = pause
    }

    func run(_ task: BGProcessingTask) {
        expired.store(false, ordering: .relaxed)
        task.expirationHandler = { [self] in
            // Runs on the library's thread while `run` is busy: just raise the flag.
            expired.store(true, ordering: .relaxed)
        }
        var removed = 0
        while !expired.load(ordering: .relaxed) {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().prefix(chunk)
            if names.isEmpty { break }
            for name in names {
                if (try? FileManager.default.removeItem(atPath: "\(folder)/\(name)")) != nil { removed += 1 }
            }
            if pause > 0 { usleep(UInt32(pause) * 1000) }
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder).count) ?? 0
        if left == 0 {
            print("Tidy: removed \(removed) files; \(folder) is empty")
            task.setTaskCompleted(success: true)
        } else {
            print("Tidy: out of time after removing \(removed) files; \(left) left for the next run")
            do {
                try Tidy.scheduleCleaning()
            } catch {
                print("Tidy: could not ask for another run: \(error)")
            }
            task.setTaskCompleted(success: false)
        }
    }
}

import ArgumentParser
import FoundationEssentials
import TaskState

/// `bgctl watch`: the state directory as it changes. With `--json`, the feed `bgtop --host` reads
/// over ssh (docs/cli.md#bgctl-watch): a snapshot line, then a line per change, and answers to
/// the request lines read on stdin.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow the state directory: a line per change; --json: the feed bgtop --host reads, with command requests on stdin.")

    @OptionGroup var locations: LocationOptions
    @Flag(help: "JSON Lines: a snapshot, then changes; reads request lines on stdin and ends when stdin closes.") var json = false

    func run() throws {
        let launchToken = try CommandSender.launchToken()
        let session: WatchSession
        do {
            session = try WatchSession(locations: locations, json: json, launchToken: launchToken)
        } catch {
            printError("cannot watch \(locations.paths.root): \(error)")
            throw BGCtl.Exit.localFailure
        }
        session.run()
    }
}

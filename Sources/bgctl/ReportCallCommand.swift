import ArgumentParser
import FoundationEssentials
import TaskState

/// `bgctl report-call`: CallKit's `reportNewIncomingCall` for an app that is not written with the
/// library (a handler's shell script): records the call with the scheduler, which is what a VoIP
/// push obliges the app to do within `voipReportSeconds`.
struct ReportCallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report-call",
        abstract: "Report an incoming call for an app (CallKit's reportNewIncomingCall), as a VoIP push obliges it to.",
        discussion: """
        The UUID is the canonical 8-4-4-4-12 form; the handle is 1 to \(CallReport.maximumHandleLength) characters (at most
        \(CallReport.maximumHandleBytes) bytes) of letters, digits, spaces and + - . _ @ : ( ) # *. A call is reported once: a second report of the same UUID is refused.
        This records the report only; the library's CallProvider also shows the desktop notification, and a script
        says how it showed one with --notifier.
        """)

    @OptionGroup var locations: LocationOptions
    @Argument(help: "The app's identifier.") var app: String
    @Argument(help: "The call's UUID.") var uuid: String
    @Argument(help: "Who calls: a number, a SIP address, a user name.") var handle: String
    @Option(help: "How the call was shown: dbus, notify-send or log.") var notifier: String?

    func run() throws {
        let report = CallReport(app: try identifier(app, "app"), uuid: uuid, handle: handle, notifier: notifier)
        if let problem = report.problem { throw ValidationError(problem) }
        try CommandSender(locations: locations).send(.reportCall(report))
    }
}

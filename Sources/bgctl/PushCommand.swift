import ArgumentParser
import FoundationEssentials
import TaskState

/// `bgctl push`: the `xcrun simctl push` of this system.
struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a background push to an app (xcrun simctl push): delivered now, held, coalesced or dropped by the push rules.",
        discussion: """
        The payload must be a JSON object of at most 4096 bytes with "aps":{"content-available":1}; the default is
        {"aps":{"content-available":1}}. Prints what became of the push: delivered (to a running process or by
        launching the app), held (with its blockers), or dropped.
        """)

    @OptionGroup var locations: LocationOptions
    @Argument(help: "The app's identifier.") var app: String
    @Option(help: "The payload's JSON text.") var payload: String?
    @Option(name: .customLong("payload-file"), help: "A file holding the payload ('-' reads standard input).") var payloadFile: String?
    @Option(help: "apns-priority: 10 delivers at once within the app's budget; 5 also waits for the conditions of an app refresh.")
    var priority: String = "10"
    @Option(help: "apns-expiration: an ISO 8601 date, +SECONDS from now, or 0 (deliver now or drop).") var expiration: String?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id: held pushes with the same one replace each other.")
    var collapseID: String?
    @Option(name: .customLong("id"), help: "apns-id: a second push with the same id is not delivered again.") var messageID: String?
    @Option(help: "apns-push-type: background (the default) or voip (delivered at once, outside the budget; the app must report a call).")
    var type: String = PushType.background.rawValue

    func validate() throws {
        if payload != nil && payloadFile != nil { throw ValidationError("give --payload or --payload-file, not both") }
    }

    func run() throws {
        let now = Date()
        let request = PushRequest(
            app: try identifier(app, "app"), payload: try readPayload(), priority: try Self.priority(priority),
            expiration: try expiration.map { try Self.expiration($0, now: now) }, collapseID: collapseID, messageID: messageID,
            source: "bgctl", type: try Self.type(type))
        if let problem = request.problem { throw ValidationError(problem) }
        // "Deliver now or drop" means nothing once queued for a scheduler that is not running.
        let nowOnly = request.expiration.map { $0 <= now } ?? false
        try CommandSender(locations: locations).send(.push(request), needsScheduler: nowOnly)
    }

    /// What `--payload-file` reads at most: well past the payload limit (4096 bytes), so the
    /// size error names the real size of anything near it.
    static let maximumInput = 1 << 20

    private func readPayload() throws -> PushPayload {
        var text = payload
        if let payloadFile {
            let data: Data
            if payloadFile == "-" {
                guard let input = StandardStreams.readToEnd(maximumSize: Self.maximumInput) else {
                    printError("cannot read --payload-file: standard input holds more than \(Self.maximumInput) bytes")
                    throw BGCtl.Exit.refused
                }
                data = input
            } else {
                do {
                    data = try StateFiles.read(payloadFile, maximumSize: Self.maximumInput, followingLinks: true)
                } catch {
                    printError("cannot read --payload-file: \(error)")
                    throw BGCtl.Exit.refused
                }
            }
            text = String(decoding: data, as: UTF8.self)
        }
        guard let text else { return .wakeUp }
        do {
            return try PushPayload(validating: text)
        } catch {
            // Refused like the scheduler would refuse it (exit 1), before anything is written.
            printError(error.description)
            throw BGCtl.Exit.refused
        }
    }

    static func type(_ text: String) throws -> PushType {
        do {
            return try PushType(validating: text)
        } catch {
            throw ValidationError("bad --type: \(error.description)")
        }
    }

    static func priority(_ text: String) throws -> PushPriority {
        guard let number = Int(text), let priority = PushPriority(rawValue: number) else {
            throw ValidationError("bad --priority '\(text)': expected 5 or 10")
        }
        return priority
    }

    /// `0` is APNs' "deliver once, do not store": a date before the command's issue.
    static func expiration(_ text: String, now: Date) throws -> Date {
        if text == "0" { return Date(timeIntervalSince1970: 0) }
        do {
            return try NumberArgument.earliest(text, now: now)
        } catch let error as ValidationError {
            throw ValidationError(error.message.replacing("--earliest", with: "--expiration"))
        }
    }
}

import ArgumentParser
import FoundationEssentials
import Glibc
import TaskState

/// A `bgctl` command that makes one scheduler command, so that `bgctl batch` can take it as a line.
protocol BatchableCommand: ParsableCommand {
    var locations: LocationOptions { get }
    /// What the command line asks of the scheduler.
    func action(now: Date) throws -> CommandAction
}

/// `bgctl batch`: many commands from standard input, one `bgctl` command line a line, sent on one
/// connection with many in flight (``CommandChannel/sendAll(_:inFlight:timeout:)``): a script that
/// submits a thousand requests pays for one process and a few syncs, not a thousand of each.
struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Send the submit, cancel and complete command lines read from standard input, many at once.",
        discussion: """
        Each line is a bgctl command line without "bgctl" (submit --app A --id T --kind refresh), split as sh \
        splits words ('...', "...", \\), with no expansion; blank lines and lines starting with # are skipped. \
        Every line is checked before anything is sent: one bad line sends nothing. The commands are applied \
        in the order of the lines, each at most once, and each acknowledged only once durable, as when sent \
        one by one. Prints each applied command's message in order; refusals go to stderr as "line N: ...".
        """)

    /// The most command lines one batch takes.
    static let maximumCommands = 100_000
    /// Lines read before they are parsed together (at most 64 KiB each).
    static let linesPerBlock = 512
    /// The longest line taken, as the largest command.
    static let maximumLineBytes = CommandSocketClient.maximumCommandBytes

    @OptionGroup var locations: LocationOptions
    @Option(help: "Commands sent and not yet answered at once, 1 to 64.") var inFlight = "16"
    @Option(help: "Seconds to wait for each answer, 1 to 3600.") var timeout = "10"

    func run() throws {
        let window = Int(try NumberArgument.whole(inFlight, option: "--in-flight", in: 1...Int64(CommandChannel.maximumInFlight)))
        let seconds = TimeInterval(try NumberArgument.whole(timeout, option: "--timeout", in: 1...3600))
        let now = Date()
        let token = try CommandSender.launchToken()
        var commands: [Command] = []
        var lineNumbers: [Int] = []
        var number = 0
        var input = InputLines(maximumBytes: Self.maximumLineBytes)
        func refuse(_ reason: String) -> Error {
            printError("line \(number): \(reason); nothing was sent")
            return BGCtl.Exit.usage
        }
        // Lines are checked as they are read and parsed in blocks, side by side; a block is parsed
        // before a bad line found while reading the next one is reported, so the first bad line
        // is the one reported.
        var block: [(number: Int, words: [String])] = []
        func parseBlock() throws {
            for (line, parsed) in zip(block, BatchLine.parse(block.map(\.words), now: now)) {
                number = line.number
                switch parsed {
                case .action(let action):
                    // Ids a microsecond apart keep the lines' order where the inbox takes them (it
                    // applies commands in the order of their ids).
                    commands.append(Command(id: Command.newID(at: now.addingTimeInterval(Double(commands.count) / 1_000_000)),
                                            issuedAt: now, issuerPID: getpid(), launchToken: token, action: action))
                    lineNumbers.append(number)
                case .refused(let reason): throw refuse(reason)
                case .exit(let exit): throw exit
                }
            }
            block.removeAll(keepingCapacity: true)
        }
        func refuseAfterBlock(_ reason: String) throws -> Never {
            let bad = number
            try parseBlock()
            number = bad
            throw refuse(reason)
        }
        while true {
            number += 1
            let line: String
            do {
                guard let next = try input.next() else { break }
                line = next
            } catch {
                try refuseAfterBlock(error.description)
            }
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let words: [String]
            do {
                words = try ShellWords.split(line)
            } catch {
                try refuseAfterBlock(error.description)
            }
            if words.isEmpty { continue }
            guard commands.count + block.count < Self.maximumCommands else { try refuseAfterBlock("more than \(Self.maximumCommands) commands") }
            guard !words.contains(where: { $0 == "--state" || $0 == "--config" || $0.hasPrefix("--state=") || $0.hasPrefix("--config=") }) else {
                try refuseAfterBlock("--state and --config go on bgctl batch, not on its lines")
            }
            // They would print instead of making a command.
            let printing: Set<String> = ["-h", "--help", "--version", "--experimental-dump-help", "--generate-completion-script"]
            if words[0] == "help" || words.contains(where: { printing.contains($0) || $0.hasPrefix("--generate-completion-script=") }) {
                try refuseAfterBlock("help and version requests are not taken on a batch line")
            }
            block.append((number, words))
            if block.count == Self.linesPerBlock { try parseBlock() }
        }
        try parseBlock()
        try send(commands, lines: lineNumbers, inFlight: window, timeout: seconds, now: now)
    }

    private func send(_ commands: [Command], lines: [Int], inFlight: Int, timeout: TimeInterval, now: Date) throws {
        let paths = locations.paths
        let channel = CommandChannel(paths: paths)
        var refusals = [CommandOutcome.Refusal?](repeating: nil, count: commands.count)
        if channel.schedulerPID == nil {
            // As for one command: what would be refused is refused here, not queued.
            do {
                refusals = try CommandSender.offlineRefusals(commands, paths: paths, configDirectory: locations.configDirectory, now: now)
            } catch {
                printError("bad settings file \(error)")
                throw BGCtl.Exit.localFailure
            }
        }
        let sent = commands.indices.filter { refusals[$0] == nil }
        let deliveries: [Result<CommandChannel.Delivery, StateError>]
        do {
            deliveries = try channel.sendAll(sent.map { commands[$0] }, inFlight: inFlight, timeout: timeout)
        } catch {
            printError(error.description)
            throw BGCtl.Exit.localFailure
        }
        var results = [Result<CommandChannel.Delivery, StateError>?](repeating: nil, count: commands.count)
        for (index, delivery) in zip(sent, deliveries) { results[index] = delivery }
        var refused = 0
        var queued = 0
        var unanswered = 0
        var failed = 0
        for index in commands.indices {
            let error = refusals[index] ?? { if case .success(.applied(let outcome)) = results[index] { outcome.error } else { nil } }()
            if let error {
                refused += 1
                printError("line \(lines[index]): \(error.name): \(error.message)")
                continue
            }
            switch results[index] {
            case .success(.applied(let outcome)):
                if let message = outcome.message { printLine(message) }
                // The advice `bgctl submit` gives, with the line it is about.
                if case .submit(let request) = commands[index].action,
                   let warning = DistantBeginDate.warning(identifier: request.identifier.rawValue, earliest: request.earliestBeginDate, now: now) {
                    printError("line \(lines[index]): warning: " + warning)
                }
            case .success(.queued): queued += 1
            case .success(.noAnswer): unanswered += 1
            case .failure(let error):
                failed += 1
                printError("line \(lines[index]): \(error.description)")
            case nil: break
            }
        }
        if queued > 0 {
            print("queued: \(queued) command(s); bgtaskd is not running, they will be applied when it starts")
        }
        if unanswered > 0 {
            printError("bgtaskd did not answer \(unanswered) command(s) within \(Int(timeout)) s; they stay queued in \(paths.inboxNew)")
        }
        if failed > 0 { throw BGCtl.Exit.localFailure }
        if refused > 0 { throw BGCtl.Exit.refused }
        if unanswered > 0 { throw BGCtl.Exit.notRunning }
    }
}

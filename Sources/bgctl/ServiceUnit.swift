import FoundationEssentials

/// The systemd user unit that runs the installed `bgtaskd` (`bgtaskd.service`).
///
/// `Type=notify`: systemd counts the scheduler started when it sends `READY=1` (its state
/// loaded), shows its `STATUS=` counts, and restarts it when its watchdog pings stop or it fails.
struct ServiceUnit {
    /// The unit's file name.
    static let fileName = "bgtaskd.service"
    /// systemd restarts a scheduler that has not pinged for this long; it pings at half of it.
    static let watchdogSeconds = 30

    /// The absolute path of the installed `bgtaskd`.
    var executable: String

    var text: String {
        """
        # Written by bgctl install; bgctl uninstall removes it.
        [Unit]
        Description=bgtop background-task scheduler (bgtaskd)
        Documentation=man:bgtaskd(1) man:bgctl(1)

        [Service]
        Type=notify
        ExecStart=\(Self.execArgument(executable))
        WatchdogSec=\(Self.watchdogSeconds)
        Restart=on-failure
        RestartSec=2
        # Stopping or restarting the scheduler leaves running tasks to finish; the next one adopts them.
        KillMode=process

        [Install]
        WantedBy=default.target

        """
    }

    /// Why systemd would refuse `path` as the command of `ExecStart=` ("Executable name contains
    /// special characters"): quotes, backslashes and control characters; `nil` when it is fine.
    static func problem(withExecutable path: String) -> String? {
        guard let bad = path.unicodeScalars.first(where: { "\"'\\".unicodeScalars.contains($0) || $0.properties.generalCategory == .control }) else {
            return nil
        }
        // Control characters shown escaped: never written raw to the user's terminal.
        func shown(_ scalar: Unicode.Scalar) -> String {
            scalar.properties.generalCategory == .control ? String(printf: "\\x%02x", scalar.value) : String(scalar)
        }
        return "a systemd unit cannot run a program whose path holds \(shown(bad)): \(path.unicodeScalars.map(shown).joined())"
    }

    /// A path as the `ExecStart=` command: double-quoted when it holds blanks, `%` doubled
    /// (systemd's specifiers). `$` stays: systemd expands variables in the arguments only.
    static func execArgument(_ path: String) -> String {
        // By code point: a `%` with a combining mark after it is one Character, and would be missed.
        var word = String(String.UnicodeScalarView(path.unicodeScalars.flatMap { $0 == "%" ? ["%", "%"] : [$0] }))
        // Quotes, backslashes and tabs never get here (``problem(withExecutable:)``): blanks need quoting only.
        if word.contains(" ") { word = "\"\(word)\"" }
        return word
    }
}

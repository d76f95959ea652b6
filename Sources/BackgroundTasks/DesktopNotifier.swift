import Foundation
import Logging

/// Shows a notification to the person at the desktop: through `org.freedesktop.Notifications`
/// on the session bus (with `gdbus`), else with `notify-send`, else only in the app's log.
///
/// Both tools ship with the desktop (GLib, libnotify); nothing is linked. Which one is used is
/// decided before the call is reported, so the scheduler's `callReported` event names it.
struct DesktopNotifier: Sendable {
    /// How a notification is shown; the raw value is what `reportCall` records.
    enum Route: String, Sendable {
        case dbus
        case notifySend = "notify-send"
        case log
    }

    let environment: [String: String]
    let logger: Logger

    /// The best route this process has now: D-Bus when a notification server owns
    /// `org.freedesktop.Notifications` on the session bus, `notify-send` when it is on `PATH`.
    func availableRoute() -> Route {
        if let gdbus = executable("gdbus"), environment["DBUS_SESSION_BUS_ADDRESS"]?.isEmpty == false,
           let answer = run(gdbus, ["call", "--session", "--timeout", "2", "--dest", "org.freedesktop.DBus",
                                    "--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner",
                                    "org.freedesktop.Notifications"]), answer.contains("true") {
            return .dbus
        }
        return executable("notify-send") == nil ? .log : .notifySend
    }

    /// Shows `summary` and `body` by `route`; a route that fails falls back to the log, with the
    /// reason. The texts are checked by the caller (a call handle's charset has no quotes).
    func show(summary: String, body: String, appName: String, by route: Route) {
        switch route {
        case .dbus:
            // Notify(app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout),
            // as GVariant text; urgency 2 is critical, as an incoming call is.
            if let gdbus = executable("gdbus"),
               run(gdbus, ["call", "--session", "--timeout", "5", "--dest", "org.freedesktop.Notifications",
                           "--object-path", "/org/freedesktop/Notifications", "--method", "org.freedesktop.Notifications.Notify",
                           quoted(appName), "0", quoted("call-start"), quoted(summary), quoted(body), "[]",
                           "{'urgency': <byte 2>, 'category': <'call.incoming'>}", "30000"]) != nil {
                return
            }
            logger.warning("the notification server did not take the call's notification; it is logged instead")
        case .notifySend:
            if let tool = executable("notify-send"),
               run(tool, ["--urgency=critical", "--category=call.incoming", "--app-name=\(appName)", "--", summary, body]) != nil {
                return
            }
            logger.warning("notify-send failed; the call's notification is logged instead")
        case .log:
            break
        }
        logger.notice("\(summary): \(body)")
    }

    /// A GVariant string literal; the texts given have no quote or backslash, but are escaped anyway.
    private func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// The full path of `name` on `PATH`, if it is there and executable.
    private func executable(_ name: String) -> String? {
        for directory in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") where !directory.isEmpty {
            let path = "\(directory)/\(name)"
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }

    /// Runs a tool to its end with output captured; its standard output when it exits 0.
    private func run(_ path: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

import FoundationEssentials
import Glibc
import TaskState

/// The demo's apps: a weather app refreshing every few seconds, a backup job that sometimes
/// overruns and is killed and throttled, an app that ignores expiration, and two requests that
/// wait for their dates.
enum DemoApps {
    /// Shell functions the apps share: the inbox protocol by hand (write tmp, rename into new).
    static let library = #"""
    # Commands go into the scheduler's inbox: write inbox/tmp/<id>.json, then rename into inbox/new/.
    send() {
      local id now tmp
      id=$(printf '%016x-%08x%08x' "$(date +%s%N)" "$RANDOM$RANDOM" "$$")
      now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
      tmp="$BGTASK_STATE_DIR/inbox/tmp/$id.json"
      printf '{"id":"%s","issuedAt":"%s","issuerPID":%d,%s}\n' "$id" "$now" "$$" "$1" > "$tmp"
      mv "$tmp" "$BGTASK_STATE_DIR/inbox/new/$id.json"
    }
    complete() { send "\"type\":\"complete\",\"app\":\"$BGTASK_APP_ID\",\"identifier\":\"$1\",\"success\":$2"; }
    # submit IDENTIFIER KIND SECONDS-FROM-NOW [EXTRA-JSON]
    submit() {
      local earliest
      earliest=$(date -u -d "+$3 seconds" +%Y-%m-%dT%H:%M:%S.000Z)
      send "\"type\":\"submit\",\"app\":\"$BGTASK_APP_ID\",\"identifier\":\"$1\",\"kind\":\"$2\",\"earliestBeginDate\":\"$earliest\"${4:+,$4}"
    }
    # work SECONDS: sleep in the background so signal traps run at once.
    work() { sleep "$1" & wait $!; }
    """#

    struct App {
        var id: String
        var identifiers: [String]
        var modes: [String]
        var script: String
        /// Subscribes to the demo's push topic.
        var push = false
    }

    static let apps: [App] = [
        App(id: "com.example.weather", identifiers: ["com.example.weather.refresh"], modes: ["fetch"], script: #"""
        # A recurring refresh: the next request is submitted from inside the handler.
        trap 'complete com.example.weather.refresh false; exit 0' USR1
        submit com.example.weather.refresh appRefresh $((5 + RANDOM % 4))
        work "$((2 + RANDOM % 3))"
        complete com.example.weather.refresh true
        """#),
        App(id: "com.example.backup", identifiers: ["com.example.backup.nightly"], modes: ["processing"], script: #"""
        # Maintenance on external power; it sometimes takes longer than its budget, and then half
        # the time it keeps going after the expiration signal, is killed, and throttled.
        submit com.example.backup.nightly processing 3 '"requiresExternalPower":true'
        if (( RANDOM % 2 )); then
          trap 'complete com.example.backup.nightly false; exit 0' USR1
        else
          trap 'echo "still copying, ignoring the expiration"' USR1
        fi
        work "$((4 + RANDOM % 10))"
        complete com.example.backup.nightly true
        """#),
        App(id: "com.example.stubborn", identifiers: ["com.example.stubborn.refresh"], modes: ["fetch"], script: #"""
        # Ignores expiration altogether: killed after the grace period, then throttled.
        trap '' USR1
        submit com.example.stubborn.refresh appRefresh 4
        work 120
        """#),
        App(id: "com.example.photos", identifiers: ["com.example.photos.sync"], modes: ["processing"], script: #"""
        work 2
        complete com.example.photos.sync true
        """#),
        App(id: "com.example.news", identifiers: ["com.example.news.daily", "com.example.news.prefetch"], modes: ["fetch", "processing"], script: #"""
        work 1
        for id in $BGTASK_TASK_IDS; do complete "$id" true; done
        """#),
        App(id: "com.example.alerts", identifiers: [], modes: ["remote-notification"], script: #"""
        # Woken by the demo's push server (its manifest subscribes to the storm-warnings topic):
        # it answers noData two times in three, so its push budget is soon cut (bgctl apps).
        work 1
        for id in $BGTASK_TASK_IDS; do
          if (( RANDOM % 3 )); then result=noData; else result=newData; fi
          send "\"type\":\"answerPush\",\"app\":\"$BGTASK_APP_ID\",\"identifier\":\"$id\",\"fetchResult\":\"$result\""
        done
        """#, push: true),
        // Apps whose only background work is their transfers.
        App(id: "com.example.podcasts", identifiers: [], modes: ["fetch"], script: "exit 0"),
        App(id: "com.example.maps", identifiers: [], modes: ["fetch"], script: "exit 0"),
    ]

    /// Stormy, the example app written with the BackgroundTasks library, when it was built beside
    /// this program (`swift run bgtop` builds both): it stands in for the weather script.
    static var stormyExecutable: String? {
        let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
        let path = folder + "/Stormy"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    static let stormyID = "com.example.stormy"
    static let stormyRefresh = "com.example.stormy.refresh"

    /// Short budgets so that expiry, kills and throttling happen while one watches.
    static let settings = #"""
    {
      "appRefreshBudgetSeconds": 10,
      "processingBudgetSeconds": 8,
      "expirationGraceSeconds": 2,
      "throttleInitialSeconds": 10,
      "throttleMaximumSeconds": 60,
      "coalescingWindowSeconds": 2,
      "idleLoadAverage": 1000
    }
    """#

    /// Writes the settings, the scripts and every manifest. With `stormy` (its executable and
    /// the weather URL) Stormy takes the weather app's place, checking every six seconds. Stormy
    /// and the alerts app subscribe to `pushTopic`.
    static func write(root: String, configDirectory: String, stormy: (executable: String, weatherURL: String)?,
                      pushTopic: String) throws {
        try settings.write(toFile: "\(configDirectory)/settings.json", atomically: true, encoding: .utf8)
        chmod("\(configDirectory)/settings.json", 0o644)
        let libraryPath = "\(root)/demo-lib.sh"
        try library.write(toFile: libraryPath, atomically: true, encoding: .utf8)
        if let stormy {
            let config = "\(root)/stormy.json"
            try JSONFormat.encode(JSONValue.object(["weatherURL": .string(stormy.weatherURL)])).write(to: URL(fileURLWithPath: config))
            let manifest: [String: JSONValue] = [
                "id": .string(stormyID), "executable": .string(stormy.executable),
                "arguments": strings(["--config", config, "--every", "6"]),
                "permittedIdentifiers": strings([stormyRefresh]), "backgroundModes": strings(["fetch", "remote-notification"]),
                "push": .array([.object(["ntfy": .string(pushTopic)])]),
            ]
            try writeManifest(JSONFormat.encode(JSONValue.object(manifest)), to: "\(configDirectory)/apps/\(stormyID).json")
        }
        for app in apps where stormy == nil || app.id != "com.example.weather" {
            let scriptPath = "\(root)/\(app.id).sh"
            try ("#!/bin/bash\n. '\(libraryPath)'\n" + app.script + "\n").write(toFile: scriptPath, atomically: true, encoding: .utf8)
            chmod(scriptPath, 0o755)
            var manifest: [String: JSONValue] = [
                "id": .string(app.id), "executable": .string(scriptPath), "permittedIdentifiers": strings(app.identifiers),
                "backgroundModes": strings(app.modes),
            ]
            if app.push { manifest["push"] = .array([.object(["ntfy": .string(pushTopic)])]) }
            try writeManifest(JSONFormat.encode(JSONValue.object(manifest)), to: "\(configDirectory)/apps/\(app.id).json")
        }
    }

    private static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    /// Writes a manifest 0644 whatever the umask: the scheduler refuses one others could write.
    private static func writeManifest(_ data: Data, to path: String) throws {
        try data.write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
    }

    /// The requests the demo starts with.
    static func initialCommands(now: Date, stormy: Bool) -> [Command] {
        func submit(_ app: String, _ identifier: String, _ kind: TaskKind, after seconds: TimeInterval,
                    network: Bool = false, power: Bool = false) -> Command {
            let request = SubmitRequest(app: try! Identifier(validating: app), identifier: try! Identifier(validating: identifier),
                                        kind: kind, earliestBeginDate: now.addingTimeInterval(seconds),
                                        requiresNetworkConnectivity: network, requiresExternalPower: power)
            return Command(id: Command.newID(at: now.addingTimeInterval(Double(identifier.count) / 1000)), issuedAt: now, action: .submit(request))
        }
        return [
            stormy ? submit(stormyID, stormyRefresh, .appRefresh, after: 0)
                   : submit("com.example.weather", "com.example.weather.refresh", .appRefresh, after: 0),
            submit("com.example.stubborn", "com.example.stubborn.refresh", .appRefresh, after: 0.5),
            submit("com.example.backup", "com.example.backup.nightly", .processing, after: 1, power: true),
            submit("com.example.photos", "com.example.photos.sync", .processing, after: 2 * 3600, network: true),
            submit("com.example.news", "com.example.news.daily", .appRefresh, after: 45 * 60),
            submit("com.example.news", "com.example.news.prefetch", .processing, after: 46 * 60, network: true),
        ]
    }
}

import ArgumentParser
import BackgroundTasks
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Stormy reminds you to photograph the sky on stormy days: every day at noon the scheduler
/// wakes it, it checks the weather, and on a stormy day it posts a notification. A storm warning
/// pushed by its server wakes it to check at once.
///
/// To make it yours, change `appID` and `refreshIdentifier` (and the manifest to match).
@main
struct Stormy: AsyncParsableCommand {
    static let appID = "com.example.stormy"
    static let refreshIdentifier = "com.example.stormy.refresh"
    static let uploadSessionIdentifier = "com.example.stormy.uploads"
    static let weatherSessionIdentifier = "com.example.stormy.weather"

    static let configuration = CommandConfiguration(
        abstract: "Checks the weather at noon and reminds you to photograph stormy skies.")

    @Option(name: .long, help: "Stormy's settings (JSON with weatherURL).")
    var config: String = Stormy.defaultConfigPath

    @Flag(name: .long, help: "Ask for daily storm notifications at noon (what opening the app does).")
    var schedule = false

    @Option(name: .long, help: "Check every SECONDS instead of daily at noon (for trying it out).")
    var every: Double?

    @Option(name: .long, help: "Upload this photo of the sky in the background (to uploadURL in the settings).")
    var upload: String?

    func run() async throws {
        let settings = try StormySettings.load(from: config)
        let scheduler = BGTaskScheduler.shared
        // The same identifier for the request and the handler tells the scheduler which handler to call.
        let every = every
        scheduler.register(.appRefresh(Stormy.refreshIdentifier)) {
            await Stormy.refresh(settings, every: every)
        }
        // A storm warning from Stormy's server: check the forecast now rather than at noon.
        BGApplication.shared.registerForRemoteNotifications { userInfo in
            await Stormy.stormWarning(userInfo, settings)
        }
        // Launched because a weather check that outlived its handler finished: read it, notify.
        scheduler.register(.urlSession(Stormy.weatherSessionIdentifier)) {
            await Stormy.weatherSession().deliverPendingEvents()
            await Stormy.forecastArrived(Stormy.forecastDelivery)
        }
        // Launched because the photo upload ended: hear how, then the task is complete.
        scheduler.register(.urlSession(Stormy.uploadSessionIdentifier)) {
            await Stormy.uploadSession().deliverPendingEvents()
        }
        if schedule {
            try Stormy.scheduleAppRefresh(every: every)
            print(every.map { "Stormy: storm check scheduled every \(Int($0)) s" } ?? "Stormy: daily storm check scheduled for noon")
        }
        if let upload {
            guard let uploadURL = settings.uploadURL else {
                throw ValidationError("set uploadURL in \(config) to upload photos")
            }
            // The system carries the upload; Stormy may exit, and is woken when it is done.
            let task = Stormy.uploadSession().uploadTask(with: uploadURL.appendingPathComponent(URL(fileURLWithPath: upload).lastPathComponent),
                                                         fromFile: URL(fileURLWithPath: upload))
            task.countOfBytesClientExpectsToSend = Int64((try? FileManager.default.attributesOfItem(atPath: upload)[.size] as? Int) ?? -1)
            task.resume()
            print("Stormy: uploading \(upload) in the background")
        }
        // Run the tasks the scheduler handed over (none when a person started Stormy), then exit.
        await scheduler.runUntilComplete()
    }

    /// The background refresh: schedule tomorrow's first, so the refresh stays daily, then check.
    static func refresh(_ settings: StormySettings, every: Double? = nil) async {
        do {
            try scheduleAppRefresh(every: every)
        } catch {
            print("Stormy: could not schedule tomorrow's check: \(error)")
        }
        if await isStormy(settings) {
            await notifyForPhoto()
        }
    }

    /// A storm warning pushed by Stormy's server, such as
    /// `{"aps":{"content-available":1},"storm":{"region":"north"}}`: the forecast is fetched at
    /// once (``forecastNow(_:)``), and the answer says whether there was news.
    static func stormWarning(_ userInfo: [AnyHashable: Any], _ settings: StormySettings) async -> BGApplication.BackgroundFetchResult {
        let region = (userInfo["storm"] as? [String: Any])?["region"] as? String
        print("Stormy: storm warning\(region.map { " for \($0)" } ?? ""); checking the forecast now")
        guard let weather = await forecastNow(settings) else { return .failed }
        guard weather.isStormy else { return .noData }
        await notifyForPhoto()
        return .newData
    }

    /// Asks for a background app refresh at noon tomorrow (or `every` seconds from now).
    static func scheduleAppRefresh(every: Double? = nil) throws {
        let request = BGAppRefreshTaskRequest(identifier: refreshIdentifier)
        request.earliestBeginDate = every.map { Date().addingTimeInterval($0) } ?? noonTomorrow()
        try BGTaskScheduler.shared.submit(request)
    }

    static func noonTomorrow(after now: Date = Date()) -> Date {
        let calendar = Calendar.current
        let tomorrow = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: now))!
        return calendar.date(bySettingHour: 12, minute: 0, second: 0, of: tomorrow)!
    }

    /// Whether the weather service says it is stormy (not when it cannot be asked).
    static func isStormy(_ settings: StormySettings) async -> Bool {
        await forecast(settings)?.isStormy ?? false
    }

    /// Asks the weather service through the background session, as the 2022 talk does; `nil`
    /// when it cannot say now. When the runtime runs out, the scheduler cancels this task: the
    /// request is then promoted to a background download instead of being lost, and its answer
    /// reaches `forecastArrived(_:)` when the scheduler launches Stormy for the session.
    static func forecast(_ settings: StormySettings) async -> Weather? {
        let request = URLRequest(url: settings.weatherURL)
        let session = weatherSession()
        // A check an earlier run promoted is still on its way (waiting out the relaunch delay, say):
        // its answer comes through the session, and a second one would only queue behind it.
        guard session.allTasks().isEmpty else {
            print("Stormy: an earlier weather check is still on its way; its answer comes through the session")
            return nil
        }
        do {
            let (location, response) = try await withTaskCancellationHandler {
                try await session.download(for: request)
            } onCancel: {
                // Same session, same request: this is the download in flight, carried on by the
                // scheduler after Stormy has gone (no second request).
                let task = session.downloadTask(with: request)
                task.resume()
            }
            guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
                print("Stormy: the weather service answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
                return nil
            }
            return weather(at: location)
        } catch is CancellationError {
            print("Stormy: out of background time; the weather check goes on in the background")
            return nil
        } catch {
            print("Stormy: could not check the weather: \(error)")
            return nil
        }
    }

    /// Asks the weather service at once, for a storm warning. Not through the background
    /// session: a transfer made while Stormy runs in the background may wait (it is
    /// discretionary, and the relaunch delay grows with each background launch), and a warning
    /// wants its answer now. When the runtime runs out, the request is cancelled with the task.
    static func forecastNow(_ settings: StormySettings) async -> Weather? {
        do {
            let (data, response) = try await withTaskCancellationHandler {
                try await URLSession.shared.data(from: settings.weatherURL)
            } onCancel: {
                print("Stormy: out of background time; the storm warning's check is abandoned")
            }
            guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
                print("Stormy: the weather service answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
                return nil
            }
            return weather(in: data)
        } catch {
            print("Stormy: could not check the weather: \(error.localizedDescription)")
            return nil
        }
    }

    /// The forecast in the file the weather service answered with (removed once read).
    static func weather(at location: URL) -> Weather? {
        defer { try? FileManager.default.removeItem(at: location) }
        return weather(in: FileManager.default.contents(atPath: location.path) ?? Data())
    }

    /// The forecast the weather service answered with.
    static func weather(in data: Data) -> Weather? {
        guard let weather = try? JSONDecoder().decode(Weather.self, from: data) else {
            print("Stormy: the weather service's answer is not a forecast")
            return nil
        }
        print("Stormy: the weather is \(weather.condition)")
        return weather
    }

    /// Launched because the promoted weather check finished: the delegate has read it (in
    /// `deliverPendingEvents()`); on a stormy day, notify now.
    static func forecastArrived(_ delivery: ForecastDelivery) async {
        if delivery.takeWeather()?.isStormy == true {
            await notifyForPhoto()
        }
    }

    /// Posts the reminder with `notify-send` when the desktop has it, else logs it.
    static func notifyForPhoto() async {
        let text = "It's stormy outside! Take a photo of the sky."
        if let notifySend = ["/usr/bin/notify-send", "/usr/local/bin/notify-send"].first(where: FileManager.default.isExecutableFile),
           ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: notifySend)
            process.arguments = ["Stormy", text]
            if (try? process.run()) != nil { process.waitUntilExit() }
        }
        print("Stormy: notification: \(text)")
    }

    /// The background session photos go up in; one per process, made when first needed.
    static func uploadSession() -> BGURLSession {
        sharedUploadSession
    }

    private static let sharedUploadSession = BGURLSession(
        configuration: .background(withIdentifier: uploadSessionIdentifier), delegate: UploadReport())

    /// The background session the weather is checked through (`sessionSendsLaunchEvents` is
    /// on by default): a check that outlives its handler wakes Stormy when it is done.
    static func weatherSession() -> BGURLSession {
        sharedWeatherSession
    }

    static let forecastDelivery = ForecastDelivery()

    private static let sharedWeatherSession = BGURLSession(
        configuration: .background(withIdentifier: weatherSessionIdentifier), delegate: forecastDelivery)

    static var defaultConfigPath: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? "\(environment["HOME"] ?? "/tmp")/.config"
        return "\(base)/stormy/config.json"
    }
}

/// What the weather service answers: `{"condition": "storm"}`.
struct Weather: Decodable, Sendable {
    var condition: String
    var isStormy: Bool { ["storm", "stormy", "thunderstorm"].contains(condition.lowercased()) }
}

/// Stormy's settings file.
struct StormySettings: Decodable, Sendable {
    var weatherURL: URL
    /// Where photos of the sky go (a folder URL; the file name is added).
    var uploadURL: URL?

    static func load(from path: String) throws -> StormySettings {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read \(path); it should hold {\"weatherURL\": \"http://...\"}")
        }
        do {
            return try JSONDecoder().decode(StormySettings.self, from: data)
        } catch {
            throw ValidationError("\(path) is not valid Stormy settings: \(error.localizedDescription)")
        }
    }
}

/// Tells the user how a photo upload ended.
final class UploadReport: BGURLSessionDelegate {
    func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            print("Stormy: the photo upload failed: \(error)")
        } else {
            print("Stormy: notification: Your photo of the sky is uploaded.")
        }
    }
}

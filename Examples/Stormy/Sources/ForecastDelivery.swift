import BackgroundTasks
import Foundation
import Synchronization

/// Hears of weather checks that outlived their handler (promoted in `onCancel`): the delegate
/// of the weather session, told in `deliverPendingEvents()` when Stormy is launched for it.
final class ForecastDelivery: BGURLSessionDelegate {
    private let latest = Mutex<Weather?>(nil)

    func urlSession(_ session: BGURLSession, downloadTask: BGURLSessionTask, didFinishDownloadingTo location: URL) {
        let weather = Stormy.weather(at: location)
        latest.withLock { $0 = weather }
    }

    func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { print("Stormy: the weather check in the background failed: \(error)") }
    }

    /// The forecast delivered last, once.
    func takeWeather() -> Weather? {
        latest.withLock { weather in
            defer { weather = nil }
            return weather
        }
    }
}

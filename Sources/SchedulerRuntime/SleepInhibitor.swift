import CLinuxSupport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// logind's delay inhibitor for sleep. While the scheduler holds it, a suspend waits (up to
/// logind's `InhibitDelayMaxSec`, 5 s by default) after announcing itself with
/// `PrepareForSleep(true)`: the scheduler commits the turn, syncs the state directory's file system
/// (progress files are written without a sync), and only then lets go. After
/// `PrepareForSleep(false)` it takes a new one for the next sleep.
final class SleepInhibitor {
    /// The descriptor logind handed out; -1 when none is held.
    private(set) var descriptor: Int32 = -1
    /// logind announced a sleep, and no resume yet: no new inhibitor until it resumes.
    private(set) var sleepAnnounced = false
    /// An inhibitor should be taken at the next chance (at start, after a resume, when logind
    /// came back); a refusal is not retried until one of those happens again.
    private(set) var wanted = true
    /// The announcements heard since the scheduler last took them, oldest first.
    private var heard: [Bool] = []
    /// A sleep was announced and its state not yet written: released after the next commit.
    private var releaseDue = false

    var isHeld: Bool { descriptor >= 0 }

    /// A sleep waits on this inhibitor: ``releaseIfDue(syncing:)`` will let it go.
    var releaseIsDue: Bool { releaseDue }

    /// `false`: never takes one (announcements are still followed).
    init(enabled: Bool) {
        wanted = enabled
        self.enabled = enabled
    }

    private let enabled: Bool

    deinit { release() }

    /// A `PrepareForSleep` signal from logind: `true` before a sleep, `false` after the resume.
    func announced(_ starting: Bool) {
        heard.append(starting)
        sleepAnnounced = starting
        if !starting { wanted = enabled }
    }

    /// logind's name changed owner: a new logind knows nothing of the old inhibitor nor of a
    /// sleep the old one announced (its `PreparingForSleep` is read again).
    func logindChanged() {
        release()
        sleepAnnounced = false
        wanted = enabled
    }

    /// Takes an inhibitor if one is wanted. Returns a line to log when something changed.
    func takeIfWanted(_ bus: DesktopBus) -> String? {
        guard wanted, !sleepAnnounced else { return nil }
        wanted = false
        release()
        switch bus.inhibit(what: "sleep", who: "bgtaskd",
                           why: "Writes the background-task scheduler's state before sleep", mode: "delay") {
        case .success(let kept):
            descriptor = kept
            return "logind: holding a delay inhibitor for sleep"
        case .failure(let failure):
            return "logind: no sleep inhibitor (\(failure)); a suspend does not wait for the state to be written"
        }
    }

    /// Takes the announcements heard since the last call; a sleep among them makes the release
    /// due after the next commit.
    func takeAnnouncements() -> [Bool] {
        defer { heard.removeAll() }
        if heard.contains(true) && sleepAnnounced { releaseDue = isHeld }
        if !sleepAnnounced { releaseDue = false }
        return heard
    }

    /// After a commit: when a sleep waits on this inhibitor, syncs the file system that holds
    /// `directory` and releases it. Returns whether it was released.
    func releaseIfDue(syncing directory: String) -> Bool {
        guard releaseDue else { return false }
        releaseDue = false
        let handle = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if handle >= 0 {
            _ = bg_syncfs(handle)
            close(handle)
        }
        release()
        return true
    }

    /// Lets go of the inhibitor, if one is held.
    func release() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }
}

import CLinuxSupport
import CNcurses

/// Puts the terminal back if the dashboard crashes, then lets the crash go on to the handler
/// that was there before (the Swift runtime's backtrace), so a crash never leaves a shell
/// without echo and still explains itself.
enum CrashGuard {
    static func install() {
        bg_install_crash_cleanup { endwin() }
    }
}

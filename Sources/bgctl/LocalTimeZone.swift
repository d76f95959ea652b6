import FoundationEssentials
import FoundationInternationalization

/// The user's time zone (`TZ`, else `/etc/localtime`) for the times bgctl reads and prints.
///
/// FoundationEssentials alone knows only GMT; it finds ICU's time zones by name at run time, in
/// FoundationInternationalization. A shared-library build loads that library because bgctl imports
/// it; a build with `--static-swift-stdlib` keeps only the objects something refers to, and nothing
/// refers to ICU's time zones by name, so ``keepLinked()`` does.
enum LocalTimeZone {
    /// Refers to ICU's time zones (`TimeZone.timeZoneDataVersion` lives beside them) without
    /// calling into ICU: the condition never holds, but the compiler cannot know that.
    static func keepLinked() {
        if CommandLine.argc < 0 { print(TimeZone.timeZoneDataVersion) }
    }
}

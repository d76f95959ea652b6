import SystemPackage

/// The folder and name parts of a path, as the programs' messages and installers need them.
public enum PathText {
    /// The folder holding `path`: `/a/b` → `/a`, `/a` → `/`, `a` → `` (as `dirname` without `.`).
    public static func parent(_ path: String) -> String {
        FilePath(path).removingLastComponent().string
    }

    /// The last component of `path`: `/a/b.theme` → `b.theme`; `/` → ``.
    public static func lastComponent(_ path: String) -> String {
        FilePath(path).lastComponent?.string ?? ""
    }

    // Paths are looked at as bytes, as the kernel reads them. To `String`, a `/` followed by a
    // combining mark is one `Character` with it, neither `/` nor a separator: split or searched as
    // text, `../\u{301}x` is one plain name, and the kernel climbs out through it. And two
    // spellings of `é` (one scalar, or `e` and a mark) are equal to `String` but two different
    // names on disk.

    /// The components of `path` between `/` bytes, empty ones left out: `a//b/` → `a`, `b`.
    public static func components(_ path: String) -> [String] {
        path.utf8.split(separator: slash).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether one of `path`'s components is `..`, without splitting it into strings (the
    /// scheduler checks every path of every journal batch it applies).
    public static func climbs(_ path: String) -> Bool {
        path.utf8.split(separator: slash, omittingEmptySubsequences: true).contains { $0.elementsEqual("..".utf8) }
    }

    /// Whether `name` holds a `/` byte.
    public static func hasSeparator(_ name: String) -> Bool {
        name.utf8.contains(slash)
    }

    /// Whether `path` holds a NUL byte (which would cut it short where it reaches the kernel).
    public static func hasNUL(_ path: String) -> Bool {
        path.utf8.contains(0)
    }

    /// Whether `path` is `folder` or lies under it, compared byte for byte.
    public static func isInside(_ path: String, _ folder: String) -> Bool {
        let path = Array(path.utf8), folder = Array(folder.utf8)
        if path == folder { return true }
        let prefix = folder == [slash] ? folder : folder + [slash]
        return path.starts(with: prefix)
    }

    /// Whether `name` is exactly `.` or `..`, byte for byte.
    public static func isDotOrDotDot(_ name: String) -> Bool {
        name.utf8.elementsEqual(".".utf8) || name.utf8.elementsEqual("..".utf8)
    }

    private static let slash = UInt8(ascii: "/")
}

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
}

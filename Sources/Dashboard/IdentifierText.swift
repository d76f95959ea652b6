/// Task identifiers as a table shows them beside their app: `com.example.stubborn.refresh` under
/// `com.example.stubborn` repeats the app, and where the column is narrow the repetition is all
/// that would fit. There it becomes `…refresh`; where the whole identifier fits, it stays whole.
enum IdentifierText {
    /// `identifier` for a column of `width` cells beside `app`'s column.
    static func fitted(_ identifier: String, app: String, width: Int, glyphs: Glyphs) -> String {
        guard identifier.count > width else { return identifier }
        return withoutPrefix(identifier, app: app, glyphs: glyphs)
    }

    /// `identifier` without its leading `app.`, marked with an ellipsis; unchanged when it does not
    /// start with the app.
    static func withoutPrefix(_ identifier: String, app: String, glyphs: Glyphs) -> String {
        let prefix = app + "."
        guard identifier.hasPrefix(prefix), identifier.count > prefix.count else { return identifier }
        return String(glyphs == .ascii ? "~" : "…") + identifier.dropFirst(prefix.count)
    }
}

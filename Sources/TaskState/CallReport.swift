import FoundationEssentials

/// An incoming call an app reports (CallKit's `reportNewIncomingCall`): the `reportCall`
/// command. Reporting is what a VoIP push obliges the app to do; see
/// `docs/scheduling.md#voip-pushes`.
public struct CallReport: Hashable, Sendable {
    public var app: Identifier
    /// The call's UUID, in the canonical 8-4-4-4-12 hexadecimal form.
    public var uuid: String
    /// Who calls (`CXHandle.value`): a phone number, a SIP address, a user name.
    public var handle: String
    /// How the app showed the call to the user: `dbus` (`org.freedesktop.Notifications`),
    /// `notify-send`, or `log` when neither was there.
    public var notifier: String?

    public init(app: Identifier, uuid: String, handle: String, notifier: String? = nil) {
        self.app = app
        self.uuid = uuid
        self.handle = handle
        self.notifier = notifier
    }

    /// The longest handle accepted, in characters.
    public static let maximumHandleLength = 128
    /// The longest handle accepted, in UTF-8 bytes: one character can carry any number of
    /// combining marks, so a count of characters alone does not bound the record or the event.
    public static let maximumHandleBytes = 512
    /// The characters a handle may have besides letters and digits: enough for `+1 (555) 010-2030`,
    /// `sip:alice@example.org` and `alice_b#2`, and nothing a terminal or a shell would act on.
    public static let handlePunctuation: Set<Character> = [" ", "+", "-", ".", "_", "@", ":", "(", ")", "#", "*"]
    /// How a call may have been shown.
    public static let notifiers: Set<String> = ["dbus", "notify-send", "log"]

    /// The first field that is not acceptable, as one line; `nil` when all are.
    public var problem: String? {
        Self.uuidProblem(uuid) ?? Self.handleProblem(handle) ?? notifier.flatMap { notifier in
            Self.notifiers.contains(notifier) ? nil : "notifier must be dbus, notify-send or log"
        }
    }

    /// Why `text` is not a call UUID, or `nil`.
    public static func uuidProblem(_ text: String) -> String? {
        // `UUID(uuidString:)` alone would take other spellings; the canonical one is 36 bytes.
        guard text.utf8.count == 36, UUID(uuidString: text) != nil else {
            let shown = text.utf8.count <= 64 && !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
                ? "'\(text)'" : "\(text.utf8.count) bytes"
            return "call uuid must be a UUID like 6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2, not \(shown)"
        }
        return nil
    }

    /// Why `text` is not a caller's handle, or `nil`.
    public static func handleProblem(_ text: String) -> String? {
        let count = text.count
        guard (1...maximumHandleLength).contains(count) else {
            return "call handle must be 1 to \(maximumHandleLength) characters, not \(count)"
        }
        guard text.utf8.count <= maximumHandleBytes else {
            return "call handle must be at most \(maximumHandleBytes) bytes of UTF-8, not \(text.utf8.count)"
        }
        // Every scalar, not every character: a character is judged by its first scalar, and the
        // ones joined to it (a zero-width joiner, a direction mark) would pass unseen.
        if let bad = text.unicodeScalars.first(where: { !isHandleScalar($0) }) {
            let category = bad.properties.generalCategory
            let shown = isPunctuationOrSymbol(category) ? "'\(Character(bad))'" : "U+\(String(bad.value, radix: 16, uppercase: true))"
            return "call handle may have letters, digits, spaces and + - . _ @ : ( ) # * only, not \(shown)"
        }
        if text.first == " " || text.last == " " { return "call handle must not begin or end with a space" }
        return nil
    }

    /// A letter, a digit or other number, a mark combining with one (a name written decomposed,
    /// `e` and U+0301), or one of ``handlePunctuation``.
    static func isHandleScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default:
            return handlePunctuation.contains(Character(scalar))
        }
    }

    static func isPunctuationOrSymbol(_ category: Unicode.GeneralCategory) -> Bool {
        switch category {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
             .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            return true
        default:
            return false
        }
    }
}

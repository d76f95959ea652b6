import FoundationEssentials
import TaskState

/// The file a push subscription names for its `Authorization` header (manifest
/// `authorizationFile`): read at each connection, so a new token needs no reload.
enum AuthorizationFile {
    /// The header's value in `file`: one line, trimmed. The file must be the user's own and not
    /// writable by others, like a manifest. The reason for a refusal never quotes the contents.
    static func value(at file: String) -> Result<String, Refusal> {
        func refuse(_ why: String) -> Result<String, Refusal> { .failure(Refusal(description: "authorizationFile \(file) \(why)")) }
        let data: Data
        do {
            data = try StateFiles.read(file, maximumSize: 8 << 10, followingLinks: true, vetting: ConfigTrust.vetFile(file))
        } catch {
            return .failure(Refusal(description: "authorizationFile: \(error.description)"))
        }
        guard let text = String(data: data, encoding: .utf8) else { return refuse("is not UTF-8 text") }
        let value = text.trimmedWhitespace()
        guard !value.isEmpty else { return refuse("is empty") }
        guard !value.contains(where: \.isNewline) else { return refuse("must hold one line, the Authorization header's value") }
        guard value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) else {
            return refuse("holds characters an HTTP header cannot carry")
        }
        return .success(value)
    }

    /// Why the file cannot be used, as one line.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }
}

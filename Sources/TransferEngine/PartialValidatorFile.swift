import TransferCore
import FoundationEssentials
import Glibc
import TaskState

/// The validator of the representation whose first bytes a download's partial file holds, kept in
/// a file beside it (`<id>.partial.validator`, see ``TaskState/StatePaths/transferPartialValidator(_:)``).
///
/// It is made durable before the first byte of a new representation is written, and the partial
/// file is emptied durably before a new validator replaces an old one, so after a crash at any
/// point the partial file holds a prefix of the representation its validator names, or nothing.
/// A partial file without a readable validator file is never resumed.
enum PartialValidatorFile {
    static func path(for partial: String) -> String { partial + ".validator" }

    /// The recorded validator; `nil` when the file is missing, not a regular file, or malformed.
    static func read(for partial: String) -> ResumeValidator? {
        guard let data = try? StateFiles.read(path(for: partial), maximumSize: 64 << 10) else { return nil }
        return try? JSONFormat.decode(ResumeValidator.self, from: data)
    }

    /// Records `validator` durably (temporary file, fsync, rename, fsync of the folder).
    static func write(_ validator: ResumeValidator, for partial: String) throws(TransferFailure) {
        let target = path(for: partial)
        do {
            try StateFiles.write(try JSONFormat.encode(validator), to: target, durable: true)
        } catch let error as StateError {
            if case .system(_, _, let code) = error { throw fileFailure(target, code) }
            throw .fileSystem(path: target, reason: "\(error)")
        } catch {
            throw .fileSystem(path: target, reason: "\(error)")
        }
    }

    static func remove(for partial: String) {
        _ = unlink(path(for: partial))
    }
}

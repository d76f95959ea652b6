import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// Moves a finished, fsynced partial file to its destination so that the destination holds either
/// nothing or the whole file, never a part of it, even across a crash.
enum FinalMove {
    static func perform(partial: String, to destination: ContainedDestination) throws(TransferFailure) {
        let folder = try destination.createFolders()
        let target = destination.path
        if rename(partial, target) != 0 {
            guard errno == EXDEV else { throw fileFailure(target) }
            // The state folder and the app folder are on different file systems: copy beside the
            // target, make the copy durable, then rename it into place.
            let temporary = folder + "/." + (destination.remainder.last ?? "download") + ".bgtask-partial"
            try copy(partial, to: temporary)
            guard rename(temporary, target) == 0 else {
                let failure = fileFailure(target)
                _ = unlink(temporary)
                throw failure
            }
            _ = unlink(partial)
        }
        try syncDirectory(folder)
    }

    private static func copy(_ source: String, to target: String) throws(TransferFailure) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw fileFailure(source) }
        defer { close(input) }
        let output = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else { throw fileFailure(target) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw fileFailure(source)
            }
            if count == 0 { break }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { write(output, $0.baseAddress! + offset, count - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    let failure = fileFailure(target)
                    _ = unlink(target)
                    throw failure
                }
                offset += written
            }
        }
        guard fsync(output) == 0 else {
            let failure = fileFailure(target)
            _ = unlink(target)
            throw failure
        }
    }
}

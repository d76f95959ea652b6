import TaskState
import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// A download destination checked to lie inside its app's folder.
///
/// The check is done when the attempt starts and again just before the finished file is moved,
/// so a folder swapped for a symlink in between is caught. Symlinks are followed only while they
/// stay inside the app's folder.
struct ContainedDestination: Hashable, Sendable {
    /// The app folder with symlinks resolved.
    let appFolder: String
    /// The existing folder, symlinks resolved, under which the file goes.
    let existingFolder: String
    /// Folders to create below `existingFolder`, then the file name (the last element).
    let remainder: [String]

    /// The full path of the finished file.
    var path: String { ([existingFolder] + remainder).joined(separator: "/") }

    /// Resolves `destination` (relative to `appFolder`, or absolute) and refuses anything that
    /// would land outside `appFolder`: `..` components, absolute paths elsewhere, symlinks out.
    init(destination: String, appFolder: String) throws(TransferFailure) {
        guard appFolder.hasPrefix("/") else {
            throw .destinationUnusable(path: appFolder, reason: "the app folder is not an absolute path")
        }
        guard let realApp = resolvedPath(appFolder), fileKind(realApp) == .directory else {
            throw .destinationUnusable(path: appFolder, reason: "the app folder does not exist")
        }
        // Split and compared as bytes, as the kernel reads the path (PathText).
        let components = PathText.components(destination)
        if components.contains(where: { $0.utf8.elementsEqual("..".utf8) }) || PathText.hasNUL(destination) {
            throw .destinationOutsideAppFolder(destination)
        }
        let named = components.filter { !$0.utf8.elementsEqual(".".utf8) }
        var relative: [String]
        if destination.hasPrefix("/") {
            guard let inside = Self.strip(prefix: appFolder, from: named) ?? Self.strip(prefix: realApp, from: named) else {
                throw .destinationOutsideAppFolder(destination)
            }
            relative = inside
        } else {
            relative = named
        }
        guard let fileName = relative.popLast() else {
            throw .destinationUnusable(path: destination, reason: "it names the app folder itself")
        }
        var folder = realApp
        var missing: [String] = []
        for component in relative {
            if !missing.isEmpty { missing.append(component); continue }
            let next = folder + "/" + component
            switch fileKind(next) {
            case .missing:
                missing.append(component)
            case .directory:
                folder = next
            case .symlink:
                guard let target = resolvedPath(next), Self.isInside(target, realApp), fileKind(target) == .directory else {
                    throw .destinationOutsideAppFolder(destination)
                }
                folder = target
            case .regular, .other:
                throw .destinationUnusable(path: next, reason: "not a folder")
            }
        }
        if missing.isEmpty {
            let file = folder + "/" + fileName
            switch fileKind(file) {
            case .missing, .regular:
                break
            case .symlink:
                // Renaming over a link replaces the link, but a link pointing out is refused so
                // that nobody reading through it is surprised.
                guard let target = resolvedPath(file), Self.isInside(target, realApp) else {
                    throw .destinationOutsideAppFolder(destination)
                }
            case .directory, .other:
                throw .destinationUnusable(path: file, reason: "not a regular file")
            }
        }
        self.appFolder = realApp
        self.existingFolder = folder
        self.remainder = missing + [fileName]
    }

    /// Creates the missing folders (0700) and returns the folder that will hold the file.
    func createFolders() throws(TransferFailure) -> String {
        var folder = existingFolder
        for component in remainder.dropLast() {
            folder += "/" + component
            if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw fileFailure(folder) }
            guard fileKind(folder) == .directory else {
                throw .destinationUnusable(path: folder, reason: "not a folder")
            }
        }
        return folder
    }

    private static func strip(prefix: String, from components: [String]) -> [String]? {
        let prefixComponents = PathText.components(prefix).filter { !$0.utf8.elementsEqual(".".utf8) }
        guard components.count > prefixComponents.count,
              zip(components, prefixComponents).allSatisfy({ $0.utf8.elementsEqual($1.utf8) }) else { return nil }
        return Array(components.dropFirst(prefixComponents.count))
    }

    private static func isInside(_ path: String, _ folder: String) -> Bool {
        PathText.isInside(path, folder)
    }
}

import Foundation
import LoopbackServer
import TaskState
import Testing
import TransferCore
@testable import TransferEngine
#if canImport(Glibc)
import Glibc
#endif

/// The optional SHA-256 check of a finished download (``ChecksumCheck``), compared against the
/// real `sha256sum`, on its own and inside real attempts against the loopback server.
@Suite("Checked downloads")
struct ChecksumTests {
    /// The SHA-256 of the empty input, by definition.
    static let emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    @Test("the digest agrees with sha256sum across 1 MiB reads, and for an empty file")
    func digestAgreesWithSha256sum() async throws {
        try await withScratch { scratch in
            // Not a multiple of the read size, so the last read is short.
            let path = scratch + "/data"
            try await writeGenerated(GeneratedBytes(size: 2 * (1 << 20) + 12_345, seed: 3), to: path)
            let reference = try await sha256sum(path)
            #expect(try ChecksumCheck.digest(of: path) == reference)
            let empty = scratch + "/empty"
            _ = FileManager.default.createFile(atPath: empty, contents: nil)
            #expect(try ChecksumCheck.digest(of: empty) == Self.emptyDigest)
            try ChecksumCheck.verify(file: empty, expected: Self.emptyDigest.uppercased())
        }
    }

    @Test("a mismatch is a permanent failure whose message names both digests")
    func mismatchNamesBothDigests() async throws {
        try await withScratch { scratch in
            let path = scratch + "/data"
            try await writeGenerated(GeneratedBytes(size: 100_000, seed: 8), to: path)
            let actual = try await sha256sum(path)
            let wrong = String(repeating: "ab", count: 32)
            do {
                try ChecksumCheck.verify(file: path, expected: wrong)
                Issue.record("a wrong digest was accepted")
            } catch let failure as TransferFailure {
                #expect(failure == .checksumMismatch(expected: wrong, actual: actual))
                #expect(!failure.isTransient)
                #expect(failure.description == "the download's SHA-256 is \(actual), not the expected \(wrong)")
            }
        }
    }

    @Test("a FIFO is refused at once, not read (it would never end)", .timeLimit(.minutes(10)))
    func fifoIsRefused() async throws {
        try await withScratch { scratch in
            let path = scratch + "/fifo"
            #expect(mkfifo(path, 0o600) == 0)
            // No writer ever opens it: a blocking open or read would hang here.
            let failure = try await offCooperativePool { () -> TransferFailure? in
                do {
                    _ = try ChecksumCheck.digest(of: path)
                    return nil
                } catch {
                    return error as? TransferFailure
                }
            }
            #expect(failure == .fileSystem(path: path, reason: "is not a regular file, so its SHA-256 cannot be checked"))
        }
    }

    @Test("a symlink in place of the partial data is refused, even to a file with the right digest")
    func symlinkIsRefused() async throws {
        try await withScratch { scratch in
            let target = scratch + "/empty"
            _ = FileManager.default.createFile(atPath: target, contents: nil)
            let link = scratch + "/link"
            #expect(symlink(target, link) == 0)
            #expect(throws: TransferFailure.fileSystem(path: link, reason: "is a symbolic link, not the downloaded data")) {
                try ChecksumCheck.verify(file: link, expected: Self.emptyDigest)
            }
            #expect(throws: TransferFailure.self) { try ChecksumCheck.verify(file: scratch + "/missing", expected: Self.emptyDigest) }
        }
    }

    @Test("a download with the right digest completes; with a wrong one it fails for good and leaves no file")
    func inAnAttempt() async throws {
        try await withFixture { fixture in
            let bytes = GeneratedBytes(size: 300_000, seed: 21)
            let reference = fixture.root + "/reference"
            try await writeGenerated(bytes, to: reference)
            let digest = try await sha256sum(reference)

            var good = fixture.download("good", "/generated/300000?seed=21")
            good.expectedSHA256 = digest
            let done = try await runAttempt(fixture.engine, good)
            #expect(done.final == .completed(statusCode: 200))
            #expect(try await holdsExactly(fixture.appFolder + "/good.bin", bytes, scratch: fixture.root))

            let wrong = String(digest.reversed())
            var bad = fixture.download("bad", "/generated/300000?seed=21")
            bad.expectedSHA256 = wrong
            let failed = try await runAttempt(fixture.engine, bad)
            #expect(failed.final == .failed(.checksumMismatch(expected: wrong, actual: digest)))
            #expect(!fileExists(fixture.appFolder + "/bad.bin"), "no finished file")
            #expect(!fileExists(fixture.paths.transferPartialData(fixture.key("bad"))), "the partial data is removed")
            #expect(!fileExists(fixture.validatorFile("bad")), "and its validator")
        }
    }

    private func withScratch(_ body: (String) async throws -> Void) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("bgtop-checksum-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try await body(scratch)
    }
}

import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgctl install` and `bgctl uninstall` into a temporary prefix and unit folder, checked with the
/// tools that will read what they write: `systemd-analyze verify`, `bash`, `man`.
@Suite struct InstallTests {
    @Test func installGivesAVerifiedUnitCompletionsAndManPagesAndUninstallLeavesNothing() throws {
        let env = try TestEnvironment()
        let prefix = env.root + "/prefix"
        let unitDirectory = env.root + "/units"
        // A prefix already in use: what was there before must be there after uninstall.
        try FileManager.default.createDirectory(atPath: prefix + "/share/man/man1", withIntermediateDirectories: true)
        try Data("keep\n".utf8).write(to: URL(fileURLWithPath: prefix + "/share/man/man1/other.1"))
        let before = try Self.tree(env.root)

        let installed = try env.run(TestEnvironment.binaries + "/bgctl", ["install", "--prefix", prefix, "--unit-dir", unitDirectory])
        #expect(installed.status == 0, "\(installed)")
        #expect(installed.stdout.contains("systemctl --user daemon-reload && systemctl --user enable --now bgtaskd"), "\(installed)")

        for program in ["bgtaskd", "bgctl", "bgtop"] {
            let version = try BoundedProcess.run(["\(prefix)/bin/\(program)", "--version"])
            #expect(version.status == 0 && !version.stdout.isEmpty, "\(program): \(version)")
        }
        let unit = try String(contentsOfFile: unitDirectory + "/bgtaskd.service", encoding: .utf8)
        for line in ["Type=notify", "ExecStart=\(prefix)/bin/bgtaskd", "WatchdogSec=30", "Restart=on-failure", "WantedBy=default.target"] {
            #expect(unit.split(separator: "\n").contains(Substring(line)), "\(line) in\n\(unit)")
        }
        try Self.verifyUnit(unitDirectory + "/bgtaskd.service", manualPages: prefix + "/share/man", root: env.root)
        try Self.checkCompletions(prefix: prefix)
        try Self.checkManualPages(prefix: prefix)

        // Installing again over itself is fine (the same unit), and still uninstalls completely.
        let again = try env.run(TestEnvironment.binaries + "/bgctl", ["install", "--prefix", prefix, "--unit-dir", unitDirectory])
        #expect(again.status == 0, "\(again)")

        let removed = try env.run(TestEnvironment.binaries + "/bgctl", ["uninstall", "--prefix", prefix])
        #expect(removed.status == 0, "\(removed)")
        #expect(try Self.tree(env.root) == before)
        let twice = try env.run(TestEnvironment.binaries + "/bgctl", ["uninstall", "--prefix", prefix])
        #expect(twice.status == 1)
        #expect(twice.stderr == "bgctl: nothing installed by bgctl in \(prefix) (no \(prefix)/share/bgtop/installed-files)\n")
    }

    @Test func aUnitThatDiffersIsReplacedOnlyWithForce() throws {
        let env = try TestEnvironment()
        let prefix = env.root + "/prefix"
        let unitDirectory = env.root + "/units"
        try FileManager.default.createDirectory(atPath: unitDirectory, withIntermediateDirectories: true)
        let mine = "[Service]\nExecStart=/usr/local/bin/bgtaskd --log-level debug\n"
        try Data(mine.utf8).write(to: URL(fileURLWithPath: unitDirectory + "/bgtaskd.service"))
        let before = try Self.tree(env.root)

        let refused = try env.run(TestEnvironment.binaries + "/bgctl", ["install", "--prefix", prefix, "--unit-dir", unitDirectory])
        #expect(refused.status == 1)
        #expect(refused.stderr == "bgctl: \(unitDirectory)/bgtaskd.service exists and differs from the unit this install writes; --force replaces it\n")
        #expect(try Self.tree(env.root) == before, "nothing installed")
        #expect(try String(contentsOfFile: unitDirectory + "/bgtaskd.service", encoding: .utf8) == mine)

        let forced = try env.run(TestEnvironment.binaries + "/bgctl", ["install", "--prefix", prefix, "--unit-dir", unitDirectory, "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try String(contentsOfFile: unitDirectory + "/bgtaskd.service", encoding: .utf8).contains("Type=notify"))
        #expect(try env.run(TestEnvironment.binaries + "/bgctl", ["uninstall", "--prefix", prefix]).status == 0)
    }

    @Test func aPrefixWithBlanksAndPercentRunsAndOneSystemdCannotRunIsRefused() throws {
        let env = try TestEnvironment()
        let prefix = env.root + "/my apps/100%"
        let unitDirectory = env.root + "/units"
        let installed = try env.run(TestEnvironment.binaries + "/bgctl", ["install", "--prefix", prefix, "--unit-dir", unitDirectory])
        #expect(installed.status == 0, "\(installed)")
        let unit = try String(contentsOfFile: unitDirectory + "/bgtaskd.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\"\(env.root)/my apps/100%%/bin/bgtaskd\"\n"), "\(unit)")
        try Self.verifyUnit(unitDirectory + "/bgtaskd.service", manualPages: prefix + "/share/man", root: env.root)
        #expect(try env.run(TestEnvironment.binaries + "/bgctl", ["uninstall", "--prefix", prefix]).status == 0)

        let before = try Self.tree(env.root)
        let quoted = env.root + "/it's"
        let refused = try env.run(TestEnvironment.binaries + "/bgctl", ["install", "--prefix", quoted, "--unit-dir", unitDirectory])
        #expect(refused.status == 2)
        #expect(refused.stderr == "bgctl: bad --prefix: a systemd unit cannot run a program whose path holds ': \(quoted)/bin/bgtaskd\n")
        #expect(try Self.tree(env.root) == before, "nothing installed")
    }

    @Test func aReadOnlyPrefixFailsCleanlyWithNothingHalfInstalled() throws {
        let env = try TestEnvironment()
        let prefix = env.root + "/prefix"
        let unitDirectory = env.root + "/units"
        try FileManager.default.createDirectory(atPath: prefix + "/share", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: unitDirectory, withIntermediateDirectories: true)
        // bin/ can be made, share/ cannot: the failure comes after part of the tree was written.
        chmod(prefix + "/share", 0o555)
        BoundedProcess.handOver(env.root)
        let before = try Self.tree(env.root)

        let result = try BoundedProcess.run(BoundedProcess.unprivilegedPrefix
            + [TestEnvironment.binaries + "/bgctl", "install", "--prefix", prefix, "--unit-dir", unitDirectory])
        #expect(result.status == 4, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("bgctl: cannot create \(prefix)/share/") && lines[0].hasSuffix(": Permission denied"),
                "\(result)")
        #expect(try Self.tree(env.root) == before, "nothing half-installed")
    }

    // MARK: - Checks by the tools that read what install writes

    /// `systemd-analyze verify --user` (no running systemd needed: a private runtime folder) with
    /// the installed man pages on MANPATH, so the unit's `Documentation=man:` pages are looked up too.
    static func verifyUnit(_ unit: String, manualPages: String, root: String) throws {
        // Beside the test's folder, not in it: the tree before and after is compared.
        let runtime = root + "-runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let result = try BoundedProcess.run(["/usr/bin/env", "XDG_RUNTIME_DIR=\(runtime)", "MANPATH=\(manualPages)",
                                             "systemd-analyze", "--user", "verify", unit], timeout: 60)
        #expect(result.status == 0 && result.stderr.isEmpty && result.stdout.isEmpty,
                "systemd-analyze verify (installed by .ci/run, Debian package systemd): \(result)")
    }

    /// Each shell loads its completion script: bash registers a completion for the program, zsh and
    /// fish parse theirs without error (each shell only when installed; bash always is).
    static func checkCompletions(prefix: String) throws {
        for program in ["bgtaskd", "bgctl", "bgtop"] {
            let file = "\(prefix)/share/bash-completion/completions/\(program)"
            let bash = try BoundedProcess.run(["/bin/bash", "-c", "source \"$0\" && complete -p \(program)", file])
            #expect(bash.status == 0 && bash.stdout.hasPrefix("complete ") && bash.stdout.hasSuffix(" \(program)\n"), "\(program): \(bash)")
            #expect(bash.stderr.isEmpty, "\(program): \(bash)")
            let zsh = try String(contentsOfFile: "\(prefix)/share/zsh/site-functions/_\(program)", encoding: .utf8)
            #expect(zsh.hasPrefix("#compdef \(program)"), "\(program): \(zsh.prefix(80))")
            let fish = try String(contentsOfFile: "\(prefix)/share/fish/vendor_completions.d/\(program).fish", encoding: .utf8)
            #expect(fish.contains("complete -c '\(program)'"), "\(program): \(fish.suffix(300))")
        }
    }

    /// `man -l` renders each page without a warning, with the program's name, synopsis and options.
    static func checkManualPages(prefix: String) throws {
        let options = ["bgtaskd": "--state", "bgctl": "--prefix", "bgtop": "--demo"]
        for (program, option) in options {
            let page = "\(prefix)/share/man/man1/\(program).1"
            let result = try BoundedProcess.run(["/usr/bin/env", "MANPAGER=cat", "MANWIDTH=100", "LC_ALL=C.UTF-8",
                                                 "man", "--warnings", "-l", page], timeout: 60)
            #expect(result.status == 0 && result.stderr.isEmpty, "man -l \(page) (man-db, installed by .ci/run): \(result)")
            let text = result.stdout
            #expect(text.contains("NAME") && text.contains("SYNOPSIS") && text.contains("DESCRIPTION"), "\(program): \(text.prefix(400))")
            #expect(text.contains("NAME\n     \(program) — "), "\(program): the name line in \(text.prefix(400))")
            #expect(text.contains(option), "\(program): \(option) in \(text)")
        }
    }

    /// Every path under `root` with its kind and mode, and the contents of files.
    static func tree(_ root: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { throw TestFailure("cannot list \(root)") }
        while let relative = walker.nextObject() as? String {
            let path = "\(root)/\(relative)"
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let kind = RegularFile.name(ofKind: info.st_mode)
            let contents = (info.st_mode & S_IFMT) == S_IFREG ? String(decoding: (try? StateFiles.read(path)) ?? Data(), as: UTF8.self) : ""
            entries[relative] = "\(kind) \(String(info.st_mode & 0o7777, radix: 8)) \(contents)"
        }
        return entries
    }
}

import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The StrictModes rule itself, as a pure function of owner, mode and user.
@Suite("Config trust rule")
struct ConfigTrustRuleTests {
    @Test func ownerMustBeTheUserOrRoot() {
        #expect(ConfigTrust.problem(owner: 1000, mode: 0o100644, user: 1000, path: "/c") == nil)
        #expect(ConfigTrust.problem(owner: 0, mode: 0o100755, user: 1000, path: "/c") == nil)
        #expect(ConfigTrust.problem(owner: 1001, mode: 0o100644, user: 1000, path: "/c")
                == "is owned by uid 1001, not by you (uid 1000) or root")
    }

    @Test func noOneElseMayWrite() {
        #expect(ConfigTrust.problem(owner: 1000, mode: 0o040700, user: 1000, path: "/c") == nil)
        #expect(ConfigTrust.problem(owner: 1000, mode: 0o040755, user: 1000, path: "/c") == nil, "others may read")
        #expect(ConfigTrust.problem(owner: 1000, mode: 0o040775, user: 1000, path: "/c")
                == "is writable by group or others (mode 0775); run: chmod go-w /c")
        #expect(ConfigTrust.problem(owner: 1000, mode: 0o041777, user: 1000, path: "/c")
                == "is writable by group or others (mode 1777); run: chmod go-w /c", "the sticky bit does not help")
    }
}

import Foundation
import Testing

@testable import ReckonCore

/// The library reads no environment variable and installs no handler: the
/// command line reads its environment once and installs `ProcessSettings`,
/// and installs the exit and signal handlers that remove the private
/// folders. A program that uses the library gets no surprise handler.
@Suite struct LibraryProcessRuleTests {
    /// The library's folders: its Swift code and the C++ it calls.
    static let folders = ["ReckonCore", "CSimdJSON"]

    /// What reading the environment or installing a handler looks like, each with the words for it.
    static let rules: [(pattern: String, what: String)] = [
        ("ProcessInfo\\.processInfo\\.environment", "reads the process's environment"),
        ("\\b(getenv|secure_getenv|setenv|unsetenv|putenv)\\s*\\(", "reads or changes the process's environment"),
        ("\\batexit\\s*\\(|\\batexit\\s*\\{", "installs an exit handler"),
        ("(^|[^.\\w])signal\\s*\\(|\\bGlibc\\.signal\\s*\\(|\\bsigaction\\s*\\(\\s*[A-Za-z]", "installs a signal handler")
    ]

    /// Every offending line as `file:line: what: text`.
    static func offences() throws -> [String] {
        try offendingLines(in: folders, suffixes: [".swift", ".cpp", ".c", ".h"], rules: rules)
    }

    @Test func theLibraryReadsNoEnvironmentAndInstallsNoHandler() throws {
        let found = try Self.offences()
        for line in found { print(line) }
        #expect(found.isEmpty, "\(found.count) lines of the library read the environment or install a handler:\n\(found.joined(separator: "\n"))")
    }

    @Test func theSettingsTravelAsValues() throws {
        let folders = ["ReckonCore", "reckon"]
        let found = try offendingLines(
            in: folders,
            rules: [
                ("\\bTestStop\\b|\\bWorkers\\.count\\b|\\bTargetLock\\.readWait\\b", "reads a setting that now travels as a value"),
                (
                    "ProcessSettings\\.(current|install)\\b|static\\s+(var|let)\\s+\\w+\\s*:\\s*(ProcessSettings|Checkpoints|Workers)\\b",
                    "reads the settings as a global"
                )
            ])
        #expect(found.isEmpty, "\(found.count) lines read the settings as a global:\n\(found.joined(separator: "\n"))")
    }

    /// The rule finds what it forbids: each pattern catches the line it was written for.
    @Test func theRulesCatchWhatTheyForbid() throws {
        let forbidden = [
            "let root = ProcessInfo.processInfo.environment[\"TMPDIR\"]", "if (const char *forced = getenv(\"X\")) n = 1;",
            "unsetenv(variable)", "atexit { PrivateFolder.removeAll() }", "Glibc.signal(signal) { caught in", "signal(SIGINT, SIG_IGN)",
            "sigaction(SIGINT, &action, nil)"
        ]
        for line in forbidden {
            #expect(try Self.rules.contains { line.contains(try Regex($0.pattern)) }, "\(line)")
        }
        for line in ["free.signal()", "var action = sigaction()", "done.signal()"] {
            #expect(try !Self.rules.contains { line.contains(try Regex($0.pattern)) }, "\(line)")
        }
    }

    /// A library user that passes `ProcessSettings()` gets the defaults: no
    /// checkpoint, every core, `/tmp`, an empty child environment, 30 s.
    @Test func theDefaultSettingsHold() {
        let defaults = ProcessSettings()
        #expect(defaults.temporaryRoot == "/tmp" && defaults.temporaryRootVariable == nil)
        #expect(defaults.childEnvironment.isEmpty && defaults.workers == nil && defaults.lockWait == .seconds(30))
        #expect(!defaults.checkpoints.pauses(at: "flushed") && defaults.beforePrivateFolder == nil && PasswordSources().aroundPrompt == nil)
    }

    /// What the command line reads, read from a given environment: the
    /// backup password never reaches a child.
    @Test func anEnvironmentGivesTheSettings() {
        let settings = ProcessSettings(environment: [
            "TMPDIR": "/var/tmp/", "PATH": "/usr/bin", BackupPassword.variable: "secret", "RECKON_TEST_WORKERS": "0",
            "RECKON_TEST_LOCK_WAIT": "0.5", "RECKON_TEST_WAIT_AT": "flushed", "RECKON_TEST_WAIT_FILE": "/nowhere"
        ])
        #expect(settings.temporaryRoot == "/var/tmp" && settings.temporaryRootVariable == "/var/tmp/")
        #expect(
            settings.childEnvironment == [
                "TMPDIR": "/var/tmp/", "PATH": "/usr/bin", "RECKON_TEST_WORKERS": "0",
                "RECKON_TEST_LOCK_WAIT": "0.5", "RECKON_TEST_WAIT_AT": "flushed", "RECKON_TEST_WAIT_FILE": "/nowhere"
            ])
        #expect(settings.workers == 1 && settings.lockWait == .milliseconds(500))
        #expect(settings.checkpoints.pauses(at: "flushed") && !settings.checkpoints.pauses(at: "published"))
    }

    /// Making a private folder with the default settings installs no signal
    /// handler: SIGHUP's action stays what it was.
    @Test func aPrivateFolderInstallsNoHandler() throws {
        var before = sigaction()
        sigaction(SIGHUP, nil, &before)
        let folder = try PrivateFolder.make(prefix: "reckon-rule-test", process: ProcessSettings())
        PrivateFolder.remove(folder)
        var after = sigaction()
        sigaction(SIGHUP, nil, &after)
        #expect(
            unsafeBitCast(before.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(after.__sigaction_handler.sa_handler, to: Int.self))
    }
}

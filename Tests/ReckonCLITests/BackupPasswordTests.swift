import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An encrypted iPhone backup's password, through the binary: the three
/// ways it is given (the variable, a private password file, a prompt at a
/// terminal), the files refused, and the password kept out of every child
/// and every file reckon writes.
@Suite struct BackupPasswordTests {
    /// The encrypted twin of `Samples/backup/iphone` (password `reckon sample`), once its fixture is merged.
    static let encryptedSample = packageRoot.appendingPathComponent("Samples/backup/iphone-encrypted")
    static let plainSample = packageRoot.appendingPathComponent("Samples/backup/iphone")

    /// Whether the decrypting reader is in this tree: only it asks for the
    /// password (today's reader refuses an encrypted backup before asking).
    static let readerAsks = FileManager.default.fileExists(
        atPath: packageRoot.appendingPathComponent("Sources/ReckonCore/Sides/AppStore/EncryptedBackup.swift").path)

    /// A folder that is an iPhone backup as far as a path on the command
    /// line tells (`Manifest.db`), whose `Manifest.plist` says it is
    /// encrypted, and holds nothing else: enough to reach the password.
    static func encryptedBackup(in folder: URL) throws -> URL {
        let backup = folder.appendingPathComponent("backup")
        try FileManager.default.createDirectory(at: backup, withIntermediateDirectories: true)
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["IsEncrypted": true, "Version": "10.0"], format: .binary, options: 0)
        try plist.write(to: backup.appendingPathComponent("Manifest.plist"))
        try Data(repeating: 0, count: 4096).write(to: backup.appendingPathComponent("Manifest.db"))
        return backup
    }

    /// The backup the tests that need the reader to ask are run on: the
    /// encrypted sample once merged (its reader surely asks before it finds
    /// anything wrong), else the minimal folder above.
    static func askingBackup(in folder: URL) throws -> URL {
        FileManager.default.fileExists(atPath: encryptedSample.path) ? encryptedSample : try encryptedBackup(in: folder)
    }

    /// A password file holding `text` and a newline, with `mode`.
    static func passwordFile(_ text: String, mode: mode_t, in folder: URL, name: String = "password") throws -> URL {
        let file = folder.appendingPathComponent(name)
        try Data((text + "\n").utf8).write(to: file)
        #expect(chmod(file.path, mode) == 0)
        return file
    }

    /// The environment of a reckon started by these tests: the variable
    /// empty (reckon takes it as unset) unless `password` is given.
    static func environment(password: String? = nil, _ extra: [String: String] = [:]) -> [String: String] {
        extra.merging([BackupPassword.variable: password ?? ""]) { a, _ in a }
    }

    // MARK: - A password file reckon refuses: exit 64, naming it, before any side is read

    @Test func aPasswordFileOthersMayReadIsRefusedWith64NamingIt() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backup = try Self.encryptedBackup(in: folder)
        let file = try Self.passwordFile("reckon sample", mode: 0o644, in: folder)
        let remote = packageRoot.appendingPathComponent("Samples/drift/drive").path
        for arguments in [
            ["counts", backup.path, "--password-file", file.path],
            ["reconcile", "--local", backup.path, "--remote", remote, "--password-file", file.path],
            ["export", backup.path, "--out", folder.appendingPathComponent("out").path, "--password-file", file.path]
        ] {
            let result = try runArray(arguments, environment: Self.environment())
            #expect(result.code == 64, "\(arguments[0]): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: the password file \(file.path) may be read or changed by others (mode 0644)"), "\(result.stderr)")
            #expect(result.stderr.contains("Usage: reckon \(arguments[0])"))
            #expect(result.stdout.isEmpty)
            #expect(!result.stderr.contains("reckon sample"))
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path), "nothing was written")
    }

    @Test func aPasswordFileReachedThroughALinkIsRefused() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backup = try Self.encryptedBackup(in: folder)
        let file = try Self.passwordFile("reckon sample", mode: 0o600, in: folder)
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        let result = try runArray(["counts", backup.path, "--password-file", link.path], environment: Self.environment())
        #expect(result.code == 64)
        #expect(result.stderr.hasPrefix("Error: the password file \(link.path) is a link; reckon reads a password file only by its own name"))
    }

    @Test func aMissingEmptyOrNonRegularPasswordFileIsRefused() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backup = try Self.encryptedBackup(in: folder)
        let empty = folder.appendingPathComponent("empty")
        try Data("\n".utf8).write(to: empty)
        chmod(empty.path, 0o600)
        let cases: [(String, String)] = [
            (folder.appendingPathComponent("missing").path, "does not exist"),
            (empty.path, "is empty"),
            (folder.path, "is not a regular file")
        ]
        for (path, words) in cases {
            let result = try runArray(["counts", backup.path, "--password-file", path], environment: Self.environment())
            #expect(result.code == 64, "\(path): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: the password file \(path) \(words)"), "\(result.stderr)")
        }
    }

    static let rootToChown = Requirement("root, to give a file to another user") { geteuid() == 0 }

    @Test(.needs(rootToChown)) func aPasswordFileOfAnotherUserIsRefused() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backup = try Self.encryptedBackup(in: folder)
        let file = try Self.passwordFile("reckon sample", mode: 0o600, in: folder)
        #expect(chown(file.path, 65534, 65534) == 0)
        let result = try runArray(["counts", backup.path, "--password-file", file.path], environment: Self.environment())
        #expect(result.code == 64)
        #expect(result.stderr.hasPrefix("Error: the password file \(file.path) belongs to another user (uid 65534)"), "\(result.stderr)")
    }

    @Test func aPipelinesPasswordFileIsCheckedByValidateAndRun() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.encryptedBackup(in: folder)
        let file = try Self.passwordFile("reckon sample", mode: 0o640, in: folder, name: "backup.password")
        let drive = packageRoot.appendingPathComponent("Samples/drift/drive").path
        let definition = folder.appendingPathComponent("pipeline.json")
        try Data(
            """
            {"schemaVersion": 1, "local": {"kind": "store", "path": "backup", "passwordFile": "backup.password"},
             "remotes": [{"path": "\(drive)"}], "reports": {"dir": "out"}}
            """.utf8
        ).write(to: definition)
        for command in ["validate", "run"] {
            let result = try runArray([command, definition.path], environment: Self.environment())
            #expect(result.code == 64, "\(command): \(result.stderr)")
            #expect(
                result.stderr.hasPrefix(
                    "Error: \(definition.path): 'local.passwordFile' is refused: the password file backup.password may be read or changed by others (mode 0640)"
                ), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path), "nothing was written")
        chmod(file.path, 0o400)
        let valid = try runArray(["validate", definition.path], environment: Self.environment())
        #expect(valid.code == 0, "\(valid.stderr)")
        // Only a store side reads a password.
        try Data(
            """
            {"schemaVersion": 1, "local": {"path": "\(drive)", "passwordFile": "backup.password"}, "remotes": [{"path": "\(drive)"}]}
            """.utf8
        ).write(to: definition)
        let misplaced = try runArray(["validate", definition.path], environment: Self.environment())
        #expect(misplaced.code == 64)
        #expect(misplaced.stderr.contains("'local.passwordFile' is read only for a side of kind \"store\""))
    }

    @Test func everyCommandThatTakesALocalSideTakesAPasswordFileAndNoneAPassword() throws {
        for command in ["reconcile", "counts", "export", "verify", "plan", "show", "init"] {
            let help = try reckon("help", command)
            #expect(help.stdout.contains("[--password-file <file>]"), "\(command)")
        }
        let result = try reckon("counts", "Samples/store/default.store", "--password", "reckon sample")
        #expect(result.code == 64)
        #expect(result.stderr.hasPrefix("Error: Unknown option '--password'"))
    }

    @Test func initWritesThePasswordFileIntoTheDefinitionRelativeToIt() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try Self.passwordFile("reckon sample", mode: 0o600, in: folder)
        let result = try runArray(
            [
                "init", "--local", Self.plainSample.path, "--remote", packageRoot.appendingPathComponent("Samples/drift/drive").path,
                "--dir", folder.appendingPathComponent("pipelines").path, "--password-file", file.path
            ], environment: Self.environment())
        #expect(result.code == 0, "\(result.stderr)")
        let written = try json(read(folder.appendingPathComponent("pipelines/reckon.json")))
        #expect((written["local"] as? [String: Any])?["passwordFile"] as? String == "../password")
        #expect(!(try read(folder.appendingPathComponent("pipelines/reckon.json"))).contains("reckon sample"))
    }

    // MARK: - The password never reaches a child or a file

    /// A stand-in `rclone` first on PATH (reckon finds rclone through PATH)
    /// writes its argv and environment into a file; the variable, and the
    /// password, are in neither, nor in any file the run wrote or printed.
    @Test func thePasswordReachesNoChildAndNoFile() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backup = try Self.encryptedBackup(in: folder)
        let bin = folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let dump = folder.appendingPathComponent("rclone-saw")
        try writeScript(
            """
            #!/bin/sh
            { echo "argv: $*"; env; cat /proc/$$/environ | tr '\\000' '\\n'; } >> '\(dump.path)'
            echo 'NOTICE: no such remote' >&2
            exit 3

            """, to: bin.appendingPathComponent("rclone"))
        let password = "pw-\(UUID().uuidString)"
        let out = folder.appendingPathComponent("out")
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let result = try runArray(
            ["reconcile", "--local", backup.path, "--remote", "nosuchremote:60dMemo", "--out", out.path],
            environment: Self.environment(password: password, ["PATH": bin.path + ":" + path]))
        #expect(result.code == 2, "\(result.stderr)")
        let saw = try read(dump)
        #expect(saw.contains("argv: "), "rclone was started")
        #expect(!saw.contains(password))
        #expect(!saw.contains(BackupPassword.variable))
        #expect(!result.stdout.contains(password) && !result.stderr.contains(password))
        let written = try fingerprint(out)
        #expect(!written.isEmpty, "the reports were written")
        for (name, kind) in written where kind != "folder" && !kind.hasPrefix("link") {
            let bytes = try Data(contentsOf: out.appendingPathComponent(String(name.dropFirst())))
            #expect(bytes.range(of: Data(password.utf8)) == nil, "\(name) holds the password")
        }
    }

    // MARK: - Asked of an encrypted backup: these depend on the decrypting reader

    /// Depends on the merged reader: today's refuses an encrypted backup before asking.
    @Test(.enabled(if: readerAsks, "needs the decrypting reader, which asks the password"))
    func withoutAPasswordOrATerminalOneSentenceNamesTheThreeWays() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backup = try Self.askingBackup(in: folder)
        let result = try runArray(["counts", backup.path], environment: Self.environment())
        #expect(result.code == 2)
        #expect(result.stderr.contains(PasswordSources.noPasswordMessage), "\(result.stderr)")
        #expect(result.stderr.contains("RECKON_BACKUP_PASSWORD") && result.stderr.contains("mode 0600") && result.stderr.contains("terminal"))
    }

    /// Depends on the merged reader and the encrypted sample: each way gives the plain sample's counts.
    @Test(.enabled(if: readerAsks && FileManager.default.fileExists(atPath: encryptedSample.path), "needs the decrypting reader and its fixture"))
    func theVariableAndAPasswordFileEachReadTheEncryptedSample() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = try runArray(["counts", Self.plainSample.path, "--json"], environment: Self.environment())
        #expect(plain.code == 0)
        let fromVariable = try runArray(["counts", Self.encryptedSample.path, "--json"], environment: Self.environment(password: "reckon sample"))
        #expect(fromVariable.code == 0, "\(fromVariable.stderr)")
        #expect(fromVariable.stdout == plain.stdout.replacingOccurrences(of: Self.plainSample.path, with: Self.encryptedSample.path))
        let file = try Self.passwordFile("reckon sample", mode: 0o600, in: folder)
        let fromFile = try runArray(
            ["counts", Self.encryptedSample.path, "--json", "--password-file", file.path], environment: Self.environment())
        #expect(fromFile.code == 0, "\(fromFile.stderr)")
        #expect(fromFile.stdout == fromVariable.stdout)
    }

    /// Depends on the merged reader: the prompt comes only once a backup is found encrypted.
    @Test(.enabled(if: readerAsks, "needs the decrypting reader, which asks the password"))
    func atATerminalThePasswordIsAskedWithEchoOffAndTheTerminalPutBack() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backup = try Self.askingBackup(in: folder)
        let terminal = try PseudoTerminal()
        let run = try terminal.start(["counts", backup.path], environment: Self.environment())
        let prompt = "Password of the iPhone backup \(backup.path): "
        #expect(terminal.read(until: prompt, seconds: 20).contains(prompt))
        #expect(!terminal.echoes, "echo is off while the password is typed")
        terminal.type("typed-\(folder.lastPathComponent)\n")
        #expect(run.wait(seconds: 20), "reckon ended")
        let shown = terminal.read(until: "\u{0}", seconds: 1)
        #expect(!shown.contains("typed-\(folder.lastPathComponent)"), "the password was not echoed: \(shown)")
        #expect(terminal.echoes, "echo is back on")
    }

    /// Depends on the merged reader, as above.
    @Test(
        .enabled(if: readerAsks, "needs the decrypting reader, which asks the password"),
        arguments: [SIGINT, SIGTERM])
    func aSignalWhileAskingPutsTheTerminalBackThenEndsReckon(signal: Int32) throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backup = try Self.askingBackup(in: folder)
        let terminal = try PseudoTerminal()
        let run = try terminal.start(["counts", backup.path], environment: Self.environment())
        #expect(terminal.read(until: "Password of the iPhone backup", seconds: 20).contains("Password of the iPhone backup"))
        #expect(!terminal.echoes)
        kill(run.process.processIdentifier, signal)
        #expect(run.wait(seconds: 20), "reckon ended")
        #expect(run.process.terminationReason == .uncaughtSignal)
        #expect(run.process.terminationStatus == signal)
        #expect(terminal.echoes, "echo is back on")
    }
}

/// A pseudo-terminal a test drives: reckon's standard input, output and
/// error are its other end, as at a person's terminal.
final class PseudoTerminal: @unchecked Sendable {
    let master: Int32
    let slave: Int32

    /// libc's pseudo-terminal calls, which Swift's Glibc module leaves out (they need `_XOPEN_SOURCE`).
    private static func libc<Function>(_ name: String, as type: Function.Type) -> Function {
        unsafeBitCast(dlsym(nil, name)!, to: type)  // nil: RTLD_DEFAULT in glibc
    }

    init() throws {
        let openpt = Self.libc("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
        let grantpt = Self.libc("grantpt", as: (@convention(c) (Int32) -> Int32).self)
        let unlockpt = Self.libc("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
        let ptsname = Self.libc("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
        master = openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0, grantpt(master) == 0, unlockpt(master) == 0, let name = ptsname(master) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(slave)
        close(master)
    }

    /// A started reckon, ended within a bounded wait.
    struct Run {
        let process: Process

        /// Whether it ended within `seconds`; else it is killed.
        func wait(seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            guard !process.isRunning else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return false
            }
            process.waitUntilExit()
            return true
        }
    }

    func start(_ arguments: [String], environment: [String: String]) throws -> Run {
        let process = Process()
        process.executableURL = reckonBinary
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        process.environment = childEnvironment(environment)
        let handle = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return Run(process: process)
    }

    /// What the terminal shows until `text` appears or `seconds` pass.
    func read(until text: String, seconds: Double) -> String {
        var shown = Data()
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && !String(decoding: shown, as: UTF8.self).contains(text) {
            var wanted = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&wanted, 1, 50) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let got = Glibc.read(master, &buffer, buffer.count)
            guard got > 0 else { break }
            shown.append(contentsOf: buffer[0..<got])
        }
        return String(decoding: shown, as: UTF8.self)
    }

    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Whether the terminal echoes what is typed.
    var echoes: Bool {
        var settings = termios()
        guard tcgetattr(slave, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }
}

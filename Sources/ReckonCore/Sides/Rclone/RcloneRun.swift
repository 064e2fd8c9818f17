import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Running rclone: one call with its time limit, its output and its log.
extension Rclone {
    /// One line of rclone's log: JSON (`--use-json-log`) or plain text.
    package struct LogLine: Sendable {
        package var level: String
        package var message: String
        package var object: String?
        package var stats: [String: JSONValue]?

        /// The line as a person reads it.
        package var text: String { object.map { $0.isEmpty ? message : "\($0): \(message)" } ?? message }
    }

    /// What a finished call gave.
    package struct Output: Sendable {
        package var stdout: Data
        /// Lines of level notice and above, and lines that are not JSON, masked.
        package var log: [String]
        /// Lines of level info and below (with `-v`), not masked: they carry
        /// names and statistics, and rclone puts no parameters in them.
        package var info: [LogLine]
    }

    /// The process's environment for children (`ProcessSettings`) with `environment` laid over it.
    package var mergedEnvironment: [String: String] {
        process.childEnvironment.merging(environment) { _, new in new }
    }

    /// Finds the binary: `executable`, else `rclone` in PATH's absolute
    /// folders (a relative entry such as `.` is skipped).
    package func resolvedExecutable() throws(Failure) -> String {
        let install = "install rclone (apt-get install rclone)"
        if let executable {
            guard access(executable, X_OK) == 0, FileKind(path: URL(fileURLWithPath: executable).resolvingSymlinksInPath().path).isRegular else {
                throw Failure(.notInstalled, "rclone is not at \(executable): \(install)")
            }
            return executable
        }
        for folder in (mergedEnvironment["PATH"] ?? "").split(separator: ":") where folder.hasPrefix("/") {
            let candidate = String(folder) + "/rclone"
            if access(candidate, X_OK) == 0, FileKind(path: URL(fileURLWithPath: candidate).resolvingSymlinksInPath().path).isRegular {
                return candidate
            }
        }
        throw Failure(.notInstalled, "rclone is not installed (no rclone on PATH): \(install)")
    }

    /// The commands that only read a remote; `copy` only into a local folder.
    package static let readCommands: Set<String> = ["cat", "lsjson", "config", "copy", "listremotes"]
    /// The commands that write to a remote, run only with a `WriteGrant`.
    package static let writeCommands: Set<String> = ["copyto", "moveto", "deletefile"]

    /// Whether `arguments` only read the remote: a read command, `config`
    /// only as `config dump`, and `copy` only into an absolute local path.
    static func onlyReads(_ arguments: [String]) -> Bool {
        guard let command = arguments.first, readCommands.contains(command) else { return false }
        switch command {
        case "config": return arguments.dropFirst().first == "dump"
        case "copy": return arguments.last?.hasPrefix("/") == true
        default: return true
        }
    }

    /// Runs rclone with the global flags and `arguments`, which must only
    /// read the remote (`onlyReads`): anything else is refused. stdout is
    /// kept in memory, or written to `stdoutFile` (made with mode 0600) for
    /// big outputs. Throws a Failure for any exit but 0, and stops rclone's
    /// process group (SIGTERM, then SIGKILL after `grace`) at `callLimit`.
    /// `eachLine` is given each whole line of rclone's stderr as it comes.
    /// rclone dies with the calling thread (`ChildProcess`), which waits for
    /// it; its pid is added to `childRecord`.
    @discardableResult
    package func run(
        _ arguments: [String], stdoutFile: URL? = nil, childRecord: URL? = nil, eachLine: ((Data) -> Void)? = nil
    ) throws(Failure) -> Output {
        guard Self.onlyReads(arguments) else {
            throw Failure(
                .refused,
                "reckon does not run rclone \(Self.masked(arguments.first ?? "")) here: it only reads remotes, and writes to one only in reckon apply and undo"
            )
        }
        return try launch(arguments, stdoutFile: stdoutFile, childRecord: childRecord, eachLine: eachLine)
    }

    /// Runs a command that writes to a remote (`writeCommands`, and what
    /// `run` runs), as `run` does; only apply and undo hold a grant.
    @discardableResult
    package func run(_ arguments: [String], grant: WriteGrant) throws(Failure) -> Output {
        guard let command = arguments.first, Self.writeCommands.contains(command) || Self.onlyReads(arguments) else {
            throw Failure(
                .refused,
                "reckon does not run rclone \(Self.masked(arguments.first ?? "")): it writes to a remote only with copyto, moveto and deletefile")
        }
        return try launch(arguments, stdoutFile: nil, childRecord: nil, eachLine: nil)
    }

    private func launch(_ arguments: [String], stdoutFile: URL?, childRecord: URL?, eachLine: ((Data) -> Void)?) throws(Failure) -> Output {
        let started = try start(arguments, stdoutFile: stdoutFile, childRecord: childRecord)
        defer {
            close(started.errRead)
            if started.outRead >= 0 { close(started.outRead) }
        }
        let watched = watch(started, eachLine: eachLine)
        guard let ending = watched.ending else {
            throw Failure(.timedOut, "rclone did not stop after SIGKILL within the time limit reckon gives one call")
        }
        return try outcome(watched, ending: ending, arguments: arguments, run: started.arguments)
    }

    /// rclone running, with the ends of its pipes this process reads.
    private struct Started {
        var child: ChildProcess
        var errRead: Int32
        /// -1 when rclone's stdout goes to a file.
        var outRead: Int32
        /// The arguments as rclone was given them, its secrets moved to its environment.
        var arguments: [String]
    }

    /// Starts rclone on `arguments`, its secrets moved off the command line,
    /// its stderr (and stdout, unless `stdoutFile` takes it) on pipes.
    private func start(_ arguments: [String], stdoutFile: URL?, childRecord: URL?) throws(Failure) -> Started {
        // No secret on the command line: every local user can read it.
        let secretsMoved = Self.secretsMoved(arguments)
        // Flags are on the read-only list, which takes no secret; a local path starts with `/`.
        if let left = secretsMoved.arguments.first(where: { !$0.hasPrefix("-") && !$0.hasPrefix("/") && Self.masked($0) != $0 }) {
            throw Failure(
                .refused,
                "reckon puts no secret on rclone's command line, and cannot pass the one in \(Self.masked(left)) otherwise: give it as name,key=value:path or in an rclone config file"
            )
        }
        let path = try resolvedExecutable()
        // The pipes' ends are closed on exec: no other child started meanwhile holds one.
        let errPipe: (read: Int32, write: Int32)
        var outPipe: (read: Int32, write: Int32) = (-1, -1)
        do throws(ChildProcess.Failure) {
            errPipe = try ChildProcess.pipe()
            if stdoutFile == nil {
                do throws(ChildProcess.Failure) { outPipe = try ChildProcess.pipe() } catch {
                    close(errPipe.read)
                    close(errPipe.write)
                    throw error
                }
            }
        } catch {
            throw Failure(.local, "reckon could not make a pipe for rclone", lastLine: error.reason)
        }
        do throws(Failure) {
            if let stdoutFile {
                outPipe.write = open(stdoutFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
                guard outPipe.write >= 0 else {
                    let reason = "\(stdoutFile.path): \(String(cString: strerror(errno)))"
                    close(errPipe.write)
                    throw Failure(.local, "reckon could not write rclone's output", lastLine: reason)
                }
            }
            let child: ChildProcess
            do {
                defer {
                    close(errPipe.write)
                    close(outPipe.write)
                }
                child = try ChildProcess.start(
                    path, arguments: globalFlags + secretsMoved.arguments,
                    environment: mergedEnvironment.merging(secretsMoved.environment) { _, secret in secret },
                    stdout: outPipe.write, stderr: errPipe.write)
            } catch {
                throw Failure(.notInstalled, "rclone at \(path) could not be started (\(error.reason)): install rclone (apt-get install rclone)")
            }
            if let childRecord { child.record(in: childRecord, executable: ChildProcess.realPath(path)) }
            return Started(child: child, errRead: errPipe.read, outRead: outPipe.read, arguments: secretsMoved.arguments)
        } catch {
            close(errPipe.read)
            if outPipe.read >= 0 { close(outPipe.read) }
            throw error
        }
    }

    /// What watching one call gave: its output, how it ended, and why it was stopped.
    private struct Watched {
        var stdout = Data()
        var stderr = Data()
        /// nil when rclone did not stop even after SIGKILL.
        var ending: ChildProcess.Ending?
        var timedOut = false
        var tooManyErrors = false
        /// The error lines counted (`errorLimit`).
        var errors = 0
        /// How far `stderr` was scanned for whole lines.
        var scanned = 0
    }

    /// Reads both pipes and watches the clock in one loop: it ends when
    /// rclone has exited and closed its pipes, or a bounded time after
    /// SIGKILL (a child that left the group may hold a pipe open forever).
    private func watch(_ started: Started, eachLine: ((Data) -> Void)?) -> Watched {
        let child = started.child
        var reading: [Int32] = [started.errRead]
        if started.outRead >= 0 { reading.append(started.outRead) }
        var watched = Watched()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let clock = ContinuousClock()
        let deadline = clock.now + callLimit
        var termAt: ContinuousClock.Instant?
        var killAt: ContinuousClock.Instant?
        while true {
            if watched.ending == nil { watched.ending = child.ended(waiting: false) }
            if watched.ending != nil && reading.isEmpty { break }
            let now = clock.now
            if termAt == nil, let errorLimit, watched.errors >= errorLimit {
                watched.tooManyErrors = true
                termAt = now
                child.signalGroup(SIGTERM)
            }
            if termAt == nil, now >= deadline {
                watched.timedOut = true
                termAt = now
                child.signalGroup(SIGTERM)
            }
            if let termAt, killAt == nil, now >= termAt + grace {
                killAt = now
                child.signalGroup(SIGKILL)
            }
            if let killAt, now >= killAt + .seconds(2) { break }
            var fds = reading.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), 50)
            guard ready > 0 else { continue }
            for entry in fds where entry.revents != 0 {
                let count = read(entry.fd, &buffer, buffer.count)
                if count > 0 {
                    if entry.fd == started.errRead {
                        watched.stderr.append(contentsOf: buffer[0..<count])
                        if errorLimit != nil || eachLine != nil { scanLines(&watched, eachLine: eachLine) }
                    } else {
                        watched.stdout.append(contentsOf: buffer[0..<count])
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    reading.removeAll { $0 == entry.fd }
                }
            }
        }
        for _ in 0..<20 where watched.ending == nil {
            usleep(50_000)
            watched.ending = child.ended(waiting: false)
        }
        return watched
    }

    /// Gives each whole line of stderr not yet scanned to `eachLine`, and
    /// counts the error lines among them (over the raw bytes: Foundation's
    /// range(of:in:) copies the whole buffer on each call). A file that
    /// changed while rclone read it says nothing of the connection: it is not counted.
    private func scanLines(_ watched: inout Watched, eachLine: ((Data) -> Void)?) {
        let errorMarks = [Data(#""level":"error""#.utf8), Data(#""level":"critical""#.utf8)]
        let newline = Data([UInt8(ascii: "\n")])
        while let end = Self.firstIndex(of: newline, in: watched.stderr, from: watched.scanned) {
            let line = watched.stderr.subdata(in: watched.scanned..<end)
            eachLine?(line)
            if errorLimit != nil, errorMarks.contains(where: { Self.firstIndex(of: $0, in: line, from: 0) != nil }),
                !Self.saysTheSourceChanged(String(decoding: line, as: UTF8.self))
            {
                watched.errors += 1
            }
            watched.scanned = end + 1
        }
    }

    /// The call's output, or the failure it ended in; `run` are the
    /// arguments rclone was given, which its log names remotes by.
    private func outcome(_ watched: Watched, ending: ChildProcess.Ending, arguments: [String], run: [String]) throws(Failure) -> Output {
        let secrets = arguments.flatMap(Self.secretValues(in:))
        let (shownLog, info, objectErrors) = Self.split(watched.stderr, secrets: secrets)
        var log = shownLog
        // rclone names a remote as it was run: shown as the user gave it, masked.
        for (given, run) in zip(arguments, run) where given != run {
            let pathLength = ConnectionString(given)?.path.count ?? 0
            let shown = Self.masked(String(given.dropLast(pathLength)))
            log = log.map { $0.replacingOccurrences(of: String(run.dropLast(pathLength)), with: shown) }
        }
        func failure(_ kind: Failure.Kind, _ sentence: String) -> Failure {
            var failure = Failure(kind, sentence, lastLine: log.last ?? "")
            failure.objectErrors = objectErrors
            return failure
        }
        if watched.tooManyErrors {
            throw failure(
                .tooManyErrors, "rclone was stopped after \(counted(watched.errors, "error")) in one call (the remote may have stopped answering)")
        }
        if watched.timedOut {
            throw failure(.timedOut, "rclone took longer than the \(Self.seconds(callLimit)) reckon gives one call, and was stopped")
        }
        guard ending == .exited(0) else {
            let signalled = if case .signalled = ending { true } else { false }
            throw failure(.exit(ending.status), Self.sentence(exit: ending.status, signalled: signalled))
        }
        return Output(stdout: watched.stdout, log: log, info: info)
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? "\(seconds) s" : String(format: "%.3f s", Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Whether rclone's error for a file says the file changed while rclone
    /// read it (rclone 1.60's size check after a copy, and its local backend's check).
    package static func saysTheSourceChanged(_ error: String) -> Bool {
        ["corrupted on transfer", "source file is being updated"].contains { error.contains($0) }
    }

    /// stderr split into lines a problem may show (masked), info lines, and
    /// the last error rclone logged for each object (file) it named (masked).
    package static func split(_ stderr: Data, secrets: [String]) -> (log: [String], info: [LogLine], objectErrors: [String: String]) {
        var log: [String] = []
        var info: [LogLine] = []
        var objectErrors: [String: String] = [:]
        for raw in stderr.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { continue }
            if text.hasPrefix("{"), case .object(let fields)? = try? JSONParser.parse(Data(raw)).value,
                case .string(let level)? = fields["level"], case .string(let message)? = fields["msg"]
            {
                var line = LogLine(level: level, message: message.trimmingCharacters(in: .whitespacesAndNewlines))
                if case .string(let object)? = fields["object"] { line.object = object }
                if case .object(let stats)? = fields["stats"] { line.stats = stats }
                if ["info", "debug"].contains(level) {
                    info.append(line)
                } else {
                    log.append(mask(line.text, secrets))
                    if ["error", "critical"].contains(level), let object = line.object { objectErrors[object] = mask(line.message, secrets) }
                }
            } else {
                // A plain line (a fatal error): drop Go's "2026/12/01 11:54:12 " prefix.
                log.append(mask(text.replacing(#/^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(\.\d+)? /#, with: ""), secrets))
            }
        }
        return (log, info, objectErrors)
    }

    private static func mask(_ text: String, _ secrets: [String]) -> String {
        secrets.reduce(masked(text)) { $0.replacingOccurrences(of: $1, with: "***") }
    }

    /// rclone 1.60's exit codes in words (lib/exitcode). Note that 1.60
    /// also exits 1 when it cannot open the remote at all (a refused login,
    /// an unknown remote name), through Go's log.Fatal.
    package static func sentence(exit code: Int32, signalled: Bool = false) -> String {
        switch code {
        case 0: "rclone succeeded (exit 0)"
        case 1: "rclone refused the command or could not open the remote (exit 1: a syntax or usage error, or a remote that could not be opened)"
        case 2: "rclone failed (exit 2: an error rclone does not put in a category)"
        case 3: "rclone did not find the folder (exit 3: directory not found)"
        case 4: "rclone did not find the file (exit 4: file not found)"
        case 5: "rclone could not reach the remote (exit 5: a temporary error; trying again later may work)"
        case 6: "rclone met errors it does not retry (exit 6: less serious errors, like Dropbox's 461 errors)"
        case 7: "rclone met a fatal error (exit 7: one that more tries will not fix, like a suspended account)"
        case 8: "rclone stopped at its transfer limit (exit 8: the limit set by --max-transfer was reached)"
        case 9: "rclone transferred no files (exit 9: the operation succeeded but no files were transferred)"
        default:
            signalled
                ? "rclone was ended by signal \(code - 128) (exit \(code))"
                : "rclone failed (exit \(code): a code rclone 1.60 does not document)"
        }
    }
}

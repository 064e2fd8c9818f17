import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program reckon runs (rclone), started so that it never outlives reckon:
/// in a process group of its own, and sent SIGKILL by the kernel when the
/// thread that started it ends, even when reckon is killed with SIGKILL
/// (`reckon_spawn`: Foundation's `Process` cannot ask for that). The thread
/// that starts one waits for it (`ended`); nothing else reaps it.
package struct ChildProcess: Sendable {
    package let pid: pid_t

    /// Why a program could not be started, in the system's words.
    package struct Failure: Error, Sendable {
        package var reason: String
    }

    /// How a child ended.
    package enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)

        /// The shell's number for it: the exit code, or 128 + the signal.
        package var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// Starts `executable` with `arguments` and exactly `environment`, stdin
    /// from /dev/null, stdout and stderr to the descriptors given (the
    /// caller closes its own copies).
    package static func start(
        _ executable: String, arguments: [String], environment: [String: String], stdout: Int32, stderr: Int32
    ) throws(Failure) -> ChildProcess {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup($0.key + "=" + $0.value) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard null >= 0 else { throw Failure(reason: "/dev/null: " + String(cString: strerror(errno))) }
        defer { close(null) }
        let pid = reckon_spawn(executable, argv, envp, [null, stdout, stderr])
        guard pid > 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        return ChildProcess(pid: pid)
    }

    /// A pipe whose ends are closed on exec, so that no other child holds
    /// one: the ends to read and to write.
    package static func pipe() throws(Failure) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard reckon_pipe_cloexec(&fds) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        return (fds[0], fds[1])
    }

    /// How it ended, reaping it; nil while it runs (and `waiting` is false).
    package func ended(waiting: Bool) -> Ending? {
        var status: Int32 = 0
        while true {
            let found = waitpid(pid, &status, waiting ? 0 : WNOHANG)
            if found == pid { break }
            if found == 0 { return nil }
            // Reaped elsewhere (never, in reckon): its end is unknown.
            if errno != EINTR { return .exited(-1) }
        }
        return status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
    }

    /// Sends `signal` to its process group (its own, never reckon's).
    package func signalGroup(_ signal: Int32) {
        kill(-pid, signal)
    }

    /// The real path of a program, as `/proc/<pid>/exe` shows it once started.
    package static func realPath(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    /// Adds a line `<pid> <executable>` to `record`, so that a later run can
    /// tell whether this child is still running (`allGone`).
    package func record(in record: URL, executable: String) {
        let fd = open(record.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let line = Array("\(pid) \(executable)\n".utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Whether every child `record` names is gone (`PrivateFolder.processIsGone`); true when there is no record.
    package static func allGone(in record: URL) -> Bool {
        guard let data = FileManager.default.contents(atPath: record.path) else { return true }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").allSatisfy { line in
            guard let space = line.firstIndex(of: " "), let pid = pid_t(line[..<space]) else { return true }
            return PrivateFolder.processIsGone(pid, running: String(line[line.index(after: space)...]))
        }
    }
}

import Foundation
import ReckonCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Exit codes, as DESIGN §3 gives them.
enum ExitCode: Int32 {
    case done = 0
    case drift = 1
    case trouble = 2
    case usage = 64
}

/// Where output goes; tests of the commands could swap these.
struct Console {
    /// Standard output. A write that fails (a full disk, `/dev/full`) is
    /// noted in `outputFailure`, and the command goes on to its end.
    var out: @Sendable (String) -> Void = { text in
        guard !Array(text.utf8).withUnsafeBytes({ writeAll(STDOUT_FILENO, $0) }) else { return }
        _ = outputFailure.compareExchange(expected: 0, desired: errno == 0 ? EIO : errno, ordering: .relaxed)
    }
    /// Diagnostics, each line escaped: they name files and paths, and
    /// nothing read from a source may reach a terminal raw.
    var err: @Sendable (String) -> Void = { text in
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { escapedForDisplay(String($0)) }
        writeToStandardError(lines.joined(separator: "\n"))
    }
    /// Colour only on a terminal and only without NO_COLOR.
    var color = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true
    var progress = isatty(STDERR_FILENO) == 1

    /// Prints JSON as reckon prints every JSON document: escaped for a terminal, with a newline.
    func json(_ data: Data) { out(escapedJSONForDisplay(data) + "\n") }
    /// Says a usage error on stderr, and gives its exit code.
    func usage(_ error: UsageError) -> ExitCode {
        err(error.text)
        return .usage
    }
}

/// The `errno` of the first write to standard output that failed; 0 while none has.
let outputFailure = Atomic<Int32>(0)

/// Writes to standard error; when even that fails, there is no one left to tell.
func writeToStandardError(_ text: String) {
    _ = Array(text.utf8).withUnsafeBytes { writeAll(STDERR_FILENO, $0) }
}

/// A progress line on a terminal only, redrawn in place (its carriage
/// return is the one control character reckon writes to stderr); silent in cron.
func progressPrinter(_ console: Console, quiet: Bool) -> @Sendable (String, Int, Int) -> Void {
    guard console.progress && !quiet else { return { _, _, _ in } }
    return { what, done, total in
        guard done == total || done % 100 == 0 else { return }
        writeToStandardError("\rreckon: \(what) \(done)/\(counted(total, "memo"))" + (done == total ? "\n" : ""))
    }
}

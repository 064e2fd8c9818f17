import Synchronization

/// What a run records besides its values: stage timings, progress notes
/// and warnings.
/// The command line decides what to show of them.
package final class RunContext: Sendable {
    package struct Timing: Sendable, Equatable {
        package var stage: String
        package var duration: Duration
    }

    private struct State {
        var timings: [Timing] = []
        var notes: [String] = []
        var warnings: [String] = []
    }

    private let state = Mutex(State())
    private let onNote: @Sendable (String) -> Void
    private let onWarning: @Sendable (String) -> Void
    private let onProgress: @Sendable (String, Int, Int) -> Void

    /// - Parameters:
    ///   - onNote: called for each progress note, as it happens.
    ///   - onWarning: called for each warning, as it happens.
    ///   - onProgress: called as work advances (what, done, total).
    package init(
        onNote: @escaping @Sendable (String) -> Void = { _ in },
        onWarning: @escaping @Sendable (String) -> Void = { _ in },
        onProgress: @escaping @Sendable (String, Int, Int) -> Void = { _, _, _ in }
    ) {
        self.onNote = onNote
        self.onWarning = onWarning
        self.onProgress = onProgress
    }

    /// How far a long step has come ("exporting", 120 of 4000 memos).
    package func progress(_ what: String, done: Int, total: Int) {
        onProgress(what, done, total)
    }

    package func recordTiming(stage: String, duration: Duration) {
        state.withLock { $0.timings.append(Timing(stage: stage, duration: duration)) }
    }

    /// A line of progress for a person watching ("reading Google Drive").
    package func note(_ text: String) {
        state.withLock { $0.notes.append(text) }
        onNote(text)
    }

    /// Something a person must hear of even from cron, though the run goes
    /// on ("kept the old export …"): said whatever `--quiet` says.
    package func warn(_ text: String) {
        state.withLock { $0.warnings.append(text) }
        onWarning(text)
    }

    package var timings: [Timing] { state.withLock { $0.timings } }
    package var notes: [String] { state.withLock { $0.notes } }
    package var warnings: [String] { state.withLock { $0.warnings } }
}

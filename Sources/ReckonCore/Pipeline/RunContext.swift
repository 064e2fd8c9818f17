import Synchronization

/// What a run records besides its values: stage timings, progress notes
/// and warnings.
/// The command line decides what to show of them.
public final class RunContext: Sendable {
    public struct Timing: Sendable, Equatable {
        public var stage: String
        public var duration: Duration
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
    public init(onNote: @escaping @Sendable (String) -> Void = { _ in },
                onWarning: @escaping @Sendable (String) -> Void = { _ in },
                onProgress: @escaping @Sendable (String, Int, Int) -> Void = { _, _, _ in }) {
        self.onNote = onNote
        self.onWarning = onWarning
        self.onProgress = onProgress
    }

    /// How far a long step has come ("exporting", 120 of 4000 memos).
    public func progress(_ what: String, done: Int, total: Int) {
        onProgress(what, done, total)
    }

    public func recordTiming(stage: String, duration: Duration) {
        state.withLock { $0.timings.append(Timing(stage: stage, duration: duration)) }
    }

    /// A line of progress for a person watching ("reading Google Drive").
    public func note(_ text: String) {
        state.withLock { $0.notes.append(text) }
        onNote(text)
    }

    /// Something a person must hear of even from cron, though the run goes
    /// on ("kept the old export …"): said whatever `--quiet` says.
    public func warn(_ text: String) {
        state.withLock { $0.warnings.append(text) }
        onWarning(text)
    }

    public var timings: [Timing] { state.withLock { $0.timings } }
    public var notes: [String] { state.withLock { $0.notes } }
    public var warnings: [String] { state.withLock { $0.warnings } }
}

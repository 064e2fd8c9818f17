import Synchronization

/// What a run records besides its values: stage timings and progress notes.
/// The command line decides what to show of them.
public final class RunContext: Sendable {
    public struct Timing: Sendable, Equatable {
        public var stage: String
        public var duration: Duration
    }

    private struct State {
        var timings: [Timing] = []
        var notes: [String] = []
    }

    private let state = Mutex(State())
    private let onNote: @Sendable (String) -> Void

    /// - Parameter onNote: called for each progress note, as it happens.
    public init(onNote: @escaping @Sendable (String) -> Void = { _ in }) {
        self.onNote = onNote
    }

    public func recordTiming(stage: String, duration: Duration) {
        state.withLock { $0.timings.append(Timing(stage: stage, duration: duration)) }
    }

    /// A line of progress for a person watching ("reading Google Drive").
    public func note(_ text: String) {
        state.withLock { $0.notes.append(text) }
        onNote(text)
    }

    public var timings: [Timing] { state.withLock { $0.timings } }
    public var notes: [String] { state.withLock { $0.notes } }
}

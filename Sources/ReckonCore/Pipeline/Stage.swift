/// One named step of a pipeline: takes the previous step's value and returns
/// its own. Stages do not print and do not throw: what goes wrong becomes a
/// value (a problem, a failed side, a failed output) that the report carries,
/// so every later stage still runs. The run context times them.
public struct Stage<Input, Output> {
    public let name: String
    let body: (Input, RunContext) -> Output

    public init(_ name: String, _ body: @escaping (Input, RunContext) -> Output) {
        self.name = name
        self.body = body
    }

    public func run(_ input: Input, in context: RunContext) -> Output {
        let start = ContinuousClock.now
        defer { context.recordTiming(stage: name, duration: ContinuousClock.now - start) }
        return body(input, context)
    }
}

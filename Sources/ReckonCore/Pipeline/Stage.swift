/// One named step of a pipeline: takes the previous step's value and returns
/// its own. Stages do not print; they report through the run context, which
/// also times them.
public struct Stage<Input, Output> {
    public let name: String
    let body: (Input, RunContext) throws -> Output

    public init(_ name: String, _ body: @escaping (Input, RunContext) throws -> Output) {
        self.name = name
        self.body = body
    }

    public func run(_ input: Input, in context: RunContext) throws -> Output {
        let start = ContinuousClock.now
        defer { context.recordTiming(stage: name, duration: ContinuousClock.now - start) }
        return try body(input, context)
    }
}

/// One named step of a pipeline: takes its input value and what the run
/// shares, and returns its own value. Stages do not print and do not throw:
/// what goes wrong becomes a value (a problem, a failed side, a failed
/// output) that the report carries, so every later stage still runs. The
/// run's context times them. A stage is a stored value, so a test can run
/// one alone or put another in its place.
package struct Stage<Input, Output> {
    package let name: String
    let body: (Input, PipelineRun) -> Output

    package init(_ name: String, _ body: @escaping (Input, PipelineRun) -> Output) {
        self.name = name
        self.body = body
    }

    package func run(_ input: Input, in run: PipelineRun) -> Output {
        let start = ContinuousClock.now
        defer { run.context.recordTiming(stage: name, duration: ContinuousClock.now - start) }
        return body(input, run)
    }
}

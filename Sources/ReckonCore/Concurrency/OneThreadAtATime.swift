/// A value handed to the threads of `Workers.perform` that only one of
/// them uses at a time (the reader of `memos.json`, in the one job that
/// reads it).
final class OneThreadAtATime<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

import Dispatch
import Synchronization

/// Maps `items` on every core, in chunks of `chunkSize`. `work` maps one
/// chunk and keeps what it needs from item to item (a buffer, an encoder);
/// the chunks come back in the items' order, so the outcome never depends
/// on the machine.
package func mapOnEveryCore<Item: Sendable, Output: Sendable>(_ items: [Item], chunkSize: Int,
                                                      _ work: @Sendable (ArraySlice<Item>) -> [Output]) -> [[Output]] {
    let chunks = (items.count + chunkSize - 1) / chunkSize
    let done = Mutex([[Output]](repeating: [], count: chunks))
    DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
        let results = work(items[(chunk * chunkSize)..<min(items.count, (chunk + 1) * chunkSize)])
        done.withLock { $0[chunk] = results }
    }
    return done.withLock { $0 }
}

/// Takes chunks from `next` until it gives an empty one, and hands each to
/// `consume` with what `load` made of it; `load` runs on another core one
/// chunk ahead, so loading the next chunk overlaps consuming this one.
package func withReadAhead<Value: Sendable, Loaded: Sendable>(chunks next: () throws -> [Value],
                                                      load: @escaping @Sendable ([Value]) -> Loaded,
                                                      consume: ([Value], Loaded) throws -> Void) throws {
    var chunk = try next()
    var pending = Pending { [chunk] in load(chunk) }
    while !chunk.isEmpty {
        let loaded = pending.wait()
        let following = try next()
        pending = Pending { [following] in load(following) }
        try consume(chunk, loaded)
        chunk = following
    }
}

/// Work being done on another core, and its result once done.
final class Pending<Value: Sendable>: Sendable {
    private let done = DispatchGroup()
    private let value = Mutex<Value?>(nil)

    init(_ work: @escaping @Sendable () -> Value) {
        DispatchQueue.global().async(group: done) { [self] in
            let result = work()
            value.withLock { $0 = result }
        }
    }

    func wait() -> Value {
        done.wait()
        return value.withLock { $0! }
    }
}

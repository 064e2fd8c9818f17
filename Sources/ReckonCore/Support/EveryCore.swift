import Dispatch
import Synchronization

/// Maps `items` on every core, in chunks of `chunkSize`. `work` maps one
/// chunk and keeps what it needs from item to item (a buffer, an encoder);
/// the chunks come back in the items' order, so the outcome never depends
/// on the machine.
func mapOnEveryCore<Item: Sendable, Output: Sendable>(_ items: [Item], chunkSize: Int,
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
func withReadAhead<Value: Sendable, Loaded: Sendable>(chunks next: () throws -> [Value],
                                                      load: @escaping @Sendable ([Value]) -> Loaded,
                                                      consume: ([Value], Loaded) throws -> Void) throws {
    var chunk = try next()
    var pending = PendingLoad(chunk, load)
    while !chunk.isEmpty {
        let loaded = pending.wait()
        let following = try next()
        pending = PendingLoad(following, load)
        try consume(chunk, loaded)
        chunk = following
    }
}

/// One chunk being loaded on another core.
private final class PendingLoad<Value: Sendable, Loaded: Sendable>: Sendable {
    private let done = DispatchGroup()
    private let loaded = Mutex<Loaded?>(nil)

    init(_ chunk: [Value], _ load: @escaping @Sendable ([Value]) -> Loaded) {
        DispatchQueue.global().async(group: done) { [self] in
            let result = load(chunk)
            loaded.withLock { $0 = result }
        }
    }

    func wait() -> Loaded {
        done.wait()
        return loaded.withLock { $0! }
    }
}

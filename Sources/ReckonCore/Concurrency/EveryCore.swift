import Foundation
import Synchronization

/// Maps `items` on every core (or on `workers`' threads), in chunks of
/// `chunkSize`. `work` maps one chunk and keeps what it needs from item to
/// item (a buffer, an encoder); the chunks come back in the items' order,
/// so the outcome never depends on the machine.
package func mapOnEveryCore<Item: Sendable, Output: Sendable>(
    _ items: [Item], chunkSize: Int, on workers: Workers,
    _ work: @Sendable (ArraySlice<Item>) -> [Output]
) -> [[Output]] {
    let chunks = (items.count + chunkSize - 1) / chunkSize
    let done = Mutex([[Output]](repeating: [], count: chunks))
    workers.perform(iterations: chunks) { chunk in
        let results = work(items[(chunk * chunkSize)..<min(items.count, (chunk + 1) * chunkSize)])
        done.withLock { $0[chunk] = results }
    }
    return done.withLock { $0 }
}

/// Takes chunks from `next` until it gives an empty one, and hands each to
/// `consume` with what `load` made of it; `load` runs on another core one
/// chunk ahead, so loading the next chunk overlaps consuming this one.
package func withReadAhead<Value: Sendable, Loaded: Sendable>(
    on workers: Workers, chunks next: () throws -> [Value],
    load: @escaping @Sendable ([Value]) -> Loaded,
    consume: ([Value], Loaded) throws -> Void
) throws {
    var chunk = try next()
    var pending = Pending(on: workers) { [chunk] in load(chunk) }
    while !chunk.isEmpty {
        let loaded = pending.wait()
        let following = try next()
        pending = Pending(on: workers) { [following] in load(following) }
        try consume(chunk, loaded)
        chunk = following
    }
}

/// Work being done on another core, and its result once done. Work on
/// every core inside it gets every core, even when it was started from an
/// iteration of `Workers.perform`, whose own nested work gets a share.
final class Pending<Value: Sendable>: Sendable {
    private let done = DispatchGroup()
    private let value = Mutex<Value?>(nil)

    /// Starts `work` on another core (with one worker, does it here and now).
    init(on workers: Workers, _ work: @escaping @Sendable () -> Value) {
        workers.async(group: done) { [self] in
            let result = work()
            value.withLock { $0 = result }
        }
    }

    func wait() -> Value {
        done.wait()
        return value.withLock { $0! }
    }
}

/// How many threads reckon's parallel work runs on: every core, unless the
/// process set N (`ProcessSettings.workers`: the command line reads the
/// test-only variable `RECKON_TEST_WORKERS=N`), handed to the work that
/// runs in parallel. With N=1 everything is done in order on the calling
/// thread (work "on another core" is done where it is asked for), so a test
/// run stops at the same point every time; the tests compare runs on 1, 2
/// and 3 threads. Unset (always, outside tests), it changes nothing.
package struct Workers: Sendable {
    /// The number of threads; nil: every core.
    let count: Int?

    /// `count` threads (at least one); nil: every core.
    package init(_ count: Int? = nil) { self.count = count.map { max($0, 1) } }

    /// Whether all the work is done on the calling thread.
    var one: Bool { count == 1 }

    /// How many threads work at once: `count`, or the machine's cores.
    var threads: Int { count ?? ProcessInfo.processInfo.activeProcessorCount }

    /// Runs `body` for each of `0..<iterations`: on every core, or on
    /// `count` threads that take the next iteration in turn.
    func perform(iterations: Int, _ body: @Sendable (Int) -> Void) {
        guard let count else { return DispatchQueue.concurrentPerform(iterations: iterations, execute: body) }
        guard count > 1, iterations > 1 else {
            for iteration in 0..<iterations { body(iteration) }
            return
        }
        let done = DispatchGroup()
        withoutActuallyEscaping(body) { body in
            let shared = Shared(body)
            for _ in 0..<min(count, iterations) {
                done.enter()
                Thread.detachNewThread {
                    while case let iteration = shared.next(), iteration < iterations { shared.body?(iteration) }
                    done.leave()
                }
            }
            done.wait()
            // A thread lets go of its closure only as it ends; `body` must not outlive this call.
            shared.body = nil
        }
    }

    /// Runs `work` on another core, in `group`; with one worker, here and now.
    func async(group: DispatchGroup, _ work: @escaping @Sendable () -> Void) {
        if one { work() } else { DispatchQueue.global().async(group: group, execute: work) }
    }

    /// What the threads share: the next iteration to take, and the work,
    /// set before they start and cleared once all of them are done.
    private final class Shared: @unchecked Sendable {
        private let taken = Atomic(0)
        var body: (@Sendable (Int) -> Void)?
        init(_ body: @escaping @Sendable (Int) -> Void) { self.body = body }
        func next() -> Int { taken.add(1, ordering: .relaxed).oldValue }
    }
}

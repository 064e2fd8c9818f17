import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ReckonCore

@Suite struct EveryCoreTests {
    @Test(arguments: [0, 1, 7, 64, 1000])
    func mapOnEveryCoreKeepsTheItemsOrder(count: Int) {
        let chunks = mapOnEveryCore(Array(0..<count), chunkSize: 3, on: Workers()) { chunk in
            chunk.map { $0 * 2 }
        }
        #expect(chunks.allSatisfy { $0.count <= 3 })
        #expect(Array(chunks.joined()) == (0..<count).map { $0 * 2 })
    }

    /// A remote's cache is read in a `Pending` from an iteration of the load
    /// stage's `Workers.perform`. There, two chunks of `mapOnEveryCore` that
    /// each wait for the other (10 s at most) meet: they run at once. Called
    /// from the iteration itself, they would run one after the other.
    @Test(.needs(.processors(2)))
    func workOnEveryCoreInAPendingGetsEveryCoreEvenFromAnIteration() {
        let met = Mutex<[Bool]>([])
        Workers().perform(iterations: 2) { index in
            guard index == 1 else { return }
            let together = Pending(on: Workers()) { () -> Bool in
                let arrived = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
                let waits = mapOnEveryCore([0, 1], chunkSize: 1, on: Workers()) { chunk in
                    let me = chunk.first!
                    arrived[me].signal()
                    return [arrived[1 - me].wait(timeout: .now() + 10) == .success]
                }
                return waits.joined().allSatisfy { $0 }
            }.wait()
            met.withLock { $0.append(together) }
        }
        #expect(met.withLock { $0 } == [true])
    }

    @Test(arguments: [0, 1, 5, 6, 100])
    func readAheadHandsOverEveryChunkWithWhatWasLoadedForIt(count: Int) throws {
        var remaining = Array(0..<count)
        var seen: [Int] = []
        try withReadAhead(
            on: Workers(),
            chunks: {
                let chunk = Array(remaining.prefix(5))
                remaining.removeFirst(chunk.count)
                return chunk
            },
            load: { chunk in chunk.map(String.init) },
            consume: { chunk, loaded in
                #expect(loaded == chunk.map(String.init))
                seen += chunk
            })
        #expect(seen == Array(0..<count))
    }

    @Test func readAheadStopsAtTheFirstError() {
        struct Stop: Error {}
        var next = 0
        var consumed = 0
        #expect(throws: Stop.self) {
            try withReadAhead(
                on: Workers(),
                chunks: {
                    next += 1
                    return [next]
                },
                load: { $0 },
                consume: { _, _ in
                    consumed += 1
                    if consumed == 3 { throw Stop() }
                })
        }
        #expect(consumed == 3)
        #expect(next == 4, "one chunk taken ahead of the one that failed, no more")
    }
}

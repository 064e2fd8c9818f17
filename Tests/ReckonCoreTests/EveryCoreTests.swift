import Foundation
import Synchronization
import Testing

@testable import ReckonCore

@Suite struct EveryCoreTests {
    @Test(arguments: [0, 1, 7, 64, 1000])
    func mapOnEveryCoreKeepsTheItemsOrder(count: Int) {
        let chunks = mapOnEveryCore(Array(0..<count), chunkSize: 3) { chunk in
            chunk.map { $0 * 2 }
        }
        #expect(chunks.allSatisfy { $0.count <= 3 })
        #expect(Array(chunks.joined()) == (0..<count).map { $0 * 2 })
    }

    @Test(arguments: [0, 1, 5, 6, 100])
    func readAheadHandsOverEveryChunkWithWhatWasLoadedForIt(count: Int) throws {
        var remaining = Array(0..<count)
        var seen: [Int] = []
        try withReadAhead(
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

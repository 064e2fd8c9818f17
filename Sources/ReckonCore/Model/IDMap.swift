/// Values by memo id, held as two arrays sorted by id: a third of the memory
/// a dictionary of 100,000 entries takes, found by binary search, and always
/// walked in the same order.
package struct IDMap<Value: Sendable>: Sendable {
    /// The ids, sorted, each once.
    package private(set) var keys: [MemoID] = []
    /// The values, in the order of `keys`.
    package private(set) var values: [Value] = []

    package init() {}

    /// From ids already sorted, each once, and their values.
    package init(sortedKeys keys: [MemoID], values: [Value]) {
        precondition(keys.count == values.count && zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }, "ids not sorted")
        self.keys = keys
        self.values = values
    }

    package subscript(id: MemoID) -> Value? {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == id ? values[low] : nil
    }

    package var count: Int { keys.count }
    package var isEmpty: Bool { keys.isEmpty }

    /// Each id with its value, in id order.
    package var pairs: Zip2Sequence<[MemoID], [Value]> { zip(keys, values) }
}

extension MemoID {
    /// Every id of the given lists once, in order; each list must be sorted.
    package static func union(_ lists: [[MemoID]]) -> [MemoID] {
        lists.reduce([]) { merged, list in
            var result: [MemoID] = []
            result.reserveCapacity(merged.count + list.count)
            var i = 0
            var j = 0
            while i < merged.count || j < list.count {
                let next = j == list.count || (i < merged.count && merged[i] <= list[j]) ? merged[i] : list[j]
                if i < merged.count && merged[i] == next { i += 1 }
                if j < list.count && list[j] == next { j += 1 }
                if result.last != next { result.append(next) }
            }
            return result
        }
    }
}

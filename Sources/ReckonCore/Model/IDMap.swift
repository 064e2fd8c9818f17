/// Values by memo id, held as two arrays sorted by id: a third of the memory
/// a dictionary of 100,000 entries takes, found by binary search, and always
/// walked in the same order.
public struct IDMap<Value: Sendable>: Sendable {
    /// The ids, sorted, each once.
    public private(set) var keys: [MemoID] = []
    /// The values, in the order of `keys`.
    public private(set) var values: [Value] = []

    public init() {}

    /// From pairs in any order. Where an id comes more than once, the first
    /// is kept and `dropped` is told of each later one.
    public init(firstOf pairs: [(MemoID, Value)], dropped: (MemoID, Value) -> Void = { _, _ in }) {
        let order = pairs.indices.sorted { pairs[$0].0 < pairs[$1].0 || (pairs[$0].0 == pairs[$1].0 && $0 < $1) }
        keys.reserveCapacity(pairs.count)
        values.reserveCapacity(pairs.count)
        for position in order {
            let (id, value) = pairs[position]
            if id == keys.last {
                dropped(id, value)
                continue
            }
            keys.append(id)
            values.append(value)
        }
    }

    public subscript(id: MemoID) -> Value? {
        var low = 0, high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == id ? values[low] : nil
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// Each id with its value, in id order.
    public var pairs: Zip2Sequence<[MemoID], [Value]> { zip(keys, values) }
}

import Foundation

/// libFuzzer entry point for the memo readers: any bytes must give a `Memo`
/// or a `Failure`, never a crash or a hang; and whenever the simdjson path
/// takes a file, it must give exactly what the careful reader gives. Every
/// memo read is also written as `memos.json` holds it, field by field and by
/// the general JSON writer, and the two must agree. An object both
/// Foundation's decoder and the exact reader read must come out the same,
/// numbers equal as Doubles (Foundation also takes a trailing comma, which
/// the exact reader refuses; the careful reader then keeps Foundation's values).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMemoReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let careful = try? MemoReader.readCarefully(data)
    if var memo = careful {
        memo.otherFields = [:]
        var general = JSONWriter(depth: 2)
        general.value(JSONExport.value(of: memo))
        precondition(JSONExport.entry(of: memo) == general.take(), "memos.json entry differs")
    }
    if let fast = MemoReader.readClean(data) {
        precondition(fast == careful, "readClean differs")
        precondition((try? MemoReader.readSummary(data))?.1 == careful.map(MemoSummary.init), "readSummary differs")
    }
    if let foundation = try? decodeJSON([String: JSONValue].self, from: data), let exact = JSONValue.exactObject(in: data) {
        precondition(agree(.object(exact), .object(foundation)), "exactObject differs")
    }
    return 0
}

/// The same JSON value, numbers compared by the Double they round to.
func agree(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.number, .number): return a.double == b.double
    case let (.array(x), .array(y)): return x.count == y.count && zip(x, y).allSatisfy(agree)
    case let (.object(x), .object(y)): return x.count == y.count && x.allSatisfy { key, value in y[key].map { agree(value, $0) } ?? false }
    default: return a == b
    }
}

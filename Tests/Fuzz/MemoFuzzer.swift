import Foundation

/// libFuzzer entry point for the memo readers: any bytes must give a `Memo`
/// or a `Failure`, never a crash or a hang; and whenever the simdjson path
/// takes a file, it must give exactly what the careful reader gives. Every
/// memo read is also written as `memos.json` holds it, byte by byte and by
/// JSONEncoder, and the two must agree.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMemoReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let careful = try? MemoReader.readCarefully(data)
    if var memo = careful {
        let encoder = makeJSONEncoder()
        memo.otherFields = [:]
        let direct = try! JSONExport.entry(of: memo)
        precondition(direct == Exporter.indent(try! encoder.encode(JSONExport.value(of: memo)), "    "), "memos.json entry differs")
    }
    if let fast = MemoReader.readClean(data) {
        precondition(fast == careful, "readClean differs")
        precondition((try? MemoReader.readSummary(data))?.1 == careful.map(MemoSummary.init), "readSummary differs")
    }
    return 0
}

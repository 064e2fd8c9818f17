import Foundation

/// libFuzzer entry point for the memo readers: any bytes must give a `Memo`
/// or a `Failure`, never a crash or a hang; and whenever the simdjson path
/// takes a file, it must give exactly what the careful reader gives.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMemoReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let careful = try? MemoReader.readCarefully(data)
    if let fast = MemoReader.readClean(data) {
        precondition(fast == careful, "readClean differs")
        precondition((try? MemoReader.readSummary(data))?.1 == careful.map(MemoSummary.init), "readSummary differs")
    }
    return 0
}

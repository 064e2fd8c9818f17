import Foundation

/// libFuzzer entry point for the memo reader: any bytes must give a `Memo`
/// or a `Failure`, never a crash or a hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMemoReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = try? MemoReader.read(Data(bytes: start, count: count))
    return 0
}

import Foundation

/// libFuzzer entry point for the index reader: any bytes must give a
/// `MemoIndex` or a `Failure`, never a crash or a hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIndexReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = try? IndexReader.read(Data(bytes: start, count: count))
    return 0
}

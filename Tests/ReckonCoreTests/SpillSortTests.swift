import Foundation
import Testing
@testable import ReckonCore

@Suite struct SpillSortTests {
    let scratch = TempFolder().url

    func records(_ sorter: SpillSort) throws -> [[UInt8]] {
        var result: [[UInt8]] = []
        let sorted = try sorter.sorted()
        while var reader = try sorted.next() { result.append(Array(reader.orderedText().utf8)) }
        return result
    }

    func record(_ bytes: [UInt8]) -> Record {
        var record = Record()
        record.addOrdered(String(decoding: bytes, as: UTF8.self))
        return record
    }

    @Test(arguments: [nil, 1, 64, 1 << 20])
    func givesTheRecordsInByteOrderWhereverTheyWereHeld(_ memoryLimit: Int?) throws {
        var generator = SystemRandomNumberGenerator()
        // Short records over few byte values, so prefixes and repeats are common.
        let added = (0..<2000).map { _ in (0..<Int.random(in: 0...5, using: &generator)).map { _ in UInt8.random(in: 1...4, using: &generator) } }
        let sorter = SpillSort(scratch: memoryLimit == nil ? nil : scratch, memoryLimit: memoryLimit ?? 0)
        for bytes in added { try sorter.append(record(bytes)) }
        let expected = added.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(try records(sorter) == expected)
        #expect(try records(sorter) == expected, "a second reading gives the same")
        try sorter.append(record([9]))
        #expect(try records(sorter) == expected + [[9]], "records added after a reading are sorted in")
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0 != "memos" }
        #expect(left.isEmpty, "the runs' file is unlinked at once")
    }

    @Test func fieldsComeBackAsWrittenAndOrderAsTheirValues() {
        let times: [Timestamp?] = [nil, Timestamp(seconds: -86_400 * 365, nanoseconds: 5), Timestamp(seconds: 0),
                                   Timestamp(seconds: 0, nanoseconds: 1), Timestamp(iso8601: "2026-04-19T14:32:00.5Z")]
        let texts = ["", "a", "ab", "b", "京都"]
        var encoded: [[UInt8]] = []
        for time in times {
            for text in texts {
                var record = Record()
                record.add(time)
                record.addOrdered(text)
                record.add(MemoID(idA)!)
                record.add(-7)
                record.add(text == "a" ? nil : "tag \(text)")
                record.add(Data(text.utf8).withUnsafeBytes { SHA256.digest(of: $0) })
                var reader = RecordReader(record.bytes[...])
                #expect(reader.timestamp() == time)
                #expect(reader.orderedText() == text)
                #expect(reader.id() == MemoID(idA)!)
                #expect(reader.int() == -7)
                #expect(reader.text() == (text == "a" ? nil : "tag \(text)"))
                #expect(reader.digest().hex == SHA256.hex(of: Data(text.utf8)))
                encoded.append(record.bytes)
            }
        }
        // Added in value order (absent time first, shorter text first), so the bytes are already sorted.
        #expect(encoded == encoded.sorted { $0.lexicographicallyPrecedes($1) })
    }
}

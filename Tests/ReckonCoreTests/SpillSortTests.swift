import Foundation
import TestSupport
import Testing

@testable import ReckonCore

@Suite struct SpillSortTests {
    let scratch = TempFolder().url

    /// A value to sort: short words over few letters, so repeats and prefixes are common.
    struct Word: Spillable {
        var text: String
        var number: Int

        static func < (a: Word, b: Word) -> Bool { (a.text, a.number) < (b.text, b.number) }

        func write(to record: inout Record) {
            record.add(text)
            record.add(number)
        }

        init(text: String, number: Int) {
            self.text = text
            self.number = number
        }

        init(from reader: inout RecordReader) {
            self.init(text: reader.text()!, number: reader.int())
        }
    }

    func values(_ sorter: SpillSort<Word>) throws -> [Word] {
        var result: [Word] = []
        let sorted = try sorter.sorted()
        while let word = try sorted.next() { result.append(word) }
        return result
    }

    @Test(arguments: [nil, 1, 7, 1 << 20])
    func givesTheValuesInOrderWhereverTheyWereHeld(_ runLength: Int?) throws {
        var random = TestSeed.generator()
        let added = (0..<2000).map { _ in
            Word(
                text: String((0..<Int.random(in: 0...4, using: &random)).map { _ in "abc京".randomElement(using: &random)! }),
                number: Int.random(in: -3...3, using: &random))
        }
        let sorter = SpillSort<Word>(scratch: runLength == nil ? nil : scratch, runLength: runLength ?? 1)
        for word in added { try sorter.append(word) }
        let expected = added.sorted()
        #expect(try values(sorter) == expected)
        #expect(try values(sorter) == expected, "a second reading gives the same")
        try sorter.append(Word(text: "zz", number: 0))
        #expect(try values(sorter) == (added + [Word(text: "zz", number: 0)]).sorted(), "values added after a reading are sorted in")
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0 != "memos" }
        #expect(left.isEmpty, "the runs' file is unlinked at once")
    }

    @Test func everyFieldComesBackAsWritten() {
        let times: [Timestamp?] = [
            nil, Timestamp(seconds: -86_400 * 365, nanoseconds: 5), Timestamp(seconds: 0),
            Timestamp(iso8601: "2026-04-19T14:32:00.999999999Z")
        ]
        for (number, time) in times.enumerated() {
            let text: String? = ["", "京都", nil, "a\u{0}b"][number]
            let digest = Data((text ?? "").utf8).withUnsafeBytes { SHA256.digest(of: $0) }
            var record = Record()
            record.add(time)
            record.add(text)
            record.add(MemoID(idA)!)
            record.add(-7 * number)
            record.add(UInt8(200))
            record.add(digest)
            var reader = RecordReader(record.bytes[...])
            #expect(reader.timestamp() == time)
            #expect(reader.text() == text)
            #expect(reader.id() == MemoID(idA)!)
            #expect(reader.int() == -7 * number)
            #expect(reader.byte() == 200)
            #expect(reader.digest() == digest)
        }
    }

    @Test func theByteOrderOfPathsIsTheOrderOfTheirUTF8() {
        var random = TestSeed.generator()
        let pieces = ["", "a", "b", "ab", "é", "e\u{301}", "京", "/", "-", "\u{0}", "Z", "\u{10FFFF}"]
        func word() -> String { (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        for _ in 0..<20_000 {
            let (a, b) = (word(), word())
            #expect(utf8Precedes(a, b) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(Array(a.utf8)) \(Array(b.utf8))")
        }
    }
}

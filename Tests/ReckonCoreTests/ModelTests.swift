import Foundation
import TestSupport
import Testing

@testable import ReckonCore

@Suite struct TimestampTests {
    @Test(arguments: [
        "2026-04-19T14:32:00Z",
        "2026-04-19T14:32:00.000Z",
        "2026-04-19T23:32:00+09:00",
        "2026-04-19T23:32:00.000+0900",
        "2026-04-19T09:32:00-05:00",
        "2026-04-19t14:32:00z",
        "2026-04-19 14:32:00Z",
        "2026-04-19 23:32:00+09:00"
    ])
    func spellingsOfOneInstantAreEqual(_ text: String) throws {
        let reference = try #require(Timestamp(iso8601: "2026-04-19T14:32:00Z"))
        #expect(Timestamp(iso8601: text) == reference)
    }

    @Test func fractionsAreKeptAndOrdered() throws {
        let a = try #require(Timestamp(iso8601: "2026-04-10T21:05:30.25Z"))
        let b = try #require(Timestamp(iso8601: "2026-04-10T21:05:30.250000001Z"))
        #expect(a < b)
        #expect(a.iso8601 == "2026-04-10T21:05:30.250Z")
        #expect(b.iso8601 == "2026-04-10T21:05:30.250000001Z")
    }

    @Test(arguments: [
        "2026-04-19T14:32:00", "2026-02-30T00:00:00Z", "2026-04-19_14:32:00Z", "2026-13-01T00:00:00Z",
        "2026-04-19T24:00:00Z", "2026-04-19T14:32:00.Z", "yesterday", "", "2026-04-19T14:32:00Zjunk"
    ])
    func rejectsWhatIsNotAnInstant(_ text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }

    @Test func aLeapSecondAndAYearOutside1To9999AreRefusedWithTheirReason() {
        #expect(Timestamp.parse("2016-12-31T23:59:60Z") == .failure(.leapSecond))
        #expect(Timestamp.parse("2016-12-31T23:59:61Z") == .failure(.notADate))
        #expect(Timestamp.parse("0000-12-31T23:00:00Z") == .failure(.year(0)))
        #expect(Timestamp.parse("0000-01-01T00:30:00+01:00") == .failure(.year(-1)))
        #expect(Timestamp.parse("0001-01-01T00:30:00+01:00") == .failure(.year(0)))
        #expect(Timestamp.parse("9999-12-31T23:30:00-01:00") == .failure(.year(10000)))
        #expect(Timestamp.parse("0000-12-31T23:30:00-01:00") == .success(Timestamp(seconds: -62_135_596_800 + 1_800)))
        #expect(Timestamp(iso8601: "0001-01-01T00:00:00Z")?.iso8601 == "0001-01-01T00:00:00Z")
        #expect(Timestamp(iso8601: "9999-12-31T23:59:59.999Z")?.iso8601 == "9999-12-31T23:59:59.999Z")
    }

    @Test func writesEveryInstantSoItReadsBackTheSame() {
        var generator = TestSeed.generator()
        // Year 1 to 9999, every third with a fraction of 1, 2 or 3 groups of digits.
        for round in 0..<20_000 {
            let seconds = Int64.random(in: -62_135_596_800...253_402_300_799, using: &generator)
            let nanoseconds: Int32 =
                switch round % 4 {
                case 0: 0
                case 1: Int32.random(in: 1...999, using: &generator) * 1_000_000
                case 2: Int32.random(in: 1...999_999, using: &generator) * 1_000
                default: Int32.random(in: 1...999_999_999, using: &generator)
                }
            let instant = Timestamp(seconds: seconds, nanoseconds: nanoseconds)
            let text = instant.iso8601
            #expect(Timestamp(iso8601: text) == instant, "\(text)")
            #expect([20, 24, 27, 30].contains(text.utf8.count) && text.hasSuffix("Z") && !text.hasSuffix("000Z"), "\(text)")
        }
        #expect(Timestamp(seconds: -62_167_219_200).iso8601 == "0000-01-01T00:00:00Z")
        #expect(Timestamp(seconds: 253_402_300_799, nanoseconds: 1).iso8601 == "9999-12-31T23:59:59.000000001Z")
        #expect(Timestamp(seconds: 0, nanoseconds: 10_000).iso8601 == "1970-01-01T00:00:00.000010Z")
    }

    @Test func writesUTC() throws {
        #expect(Timestamp(iso8601: "2024-02-29T23:30:00-01:00")?.iso8601 == "2024-03-01T00:30:00Z")
        #expect(Timestamp(iso8601: "1969-12-31T23:59:59Z")?.seconds == -1)
    }
}

@Suite struct MemoIDTests {
    @Test func comparesCaseInsensitivelyAndWritesSmallLetters() throws {
        let upper = try #require(MemoID("3F2504E0-4F89-11D3-9A0C-0305E82C3301"))
        let lower = try #require(MemoID("3f2504e0-4f89-11d3-9a0c-0305e82c3301"))
        #expect(upper == lower)
        #expect(upper.value == "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
    }

    @Test func everySpellingGivesItsTextAndFileName() throws {
        let capitals = "01234567-89AB-CDEF-FEDC-BA9876543210"
        let id = try #require(MemoID(capitals))
        let mixed = "01234567-89ab-CDEF-fedc-BA9876543210"
        for text in [capitals, capitals.lowercased(), mixed] {
            #expect(IDSpelling(text).text(of: id) == text)
            #expect(IDSpelling(text).fileName(of: id) == text + ".json")
        }
        var bytes: [UInt8] = [0x2A]
        id.append(to: &bytes)
        #expect(bytes == [0x2A] + Array(capitals.lowercased().utf8))
    }

    @Test(arguments: [
        "../../x", "3F2504E0-4F89-11D3-9A0C-0305E82C330", "{3F2504E0-4F89-11D3-9A0C-0305E82C3301}",
        "3F2504E04F8911D39A0C0305E82C3301", "3F2504E0-4F89-11D3-9A0C-0305E82C330G", "../3F2504E0-4F89-11D3-9A0C-0305E82C",
        "3F2504E0/4F89-11D3-9A0C-0305E82C3301", ""
    ])
    func rejectsNonUUIDs(_ text: String) {
        #expect(MemoID(text) == nil)
    }
}

@Suite struct CountingTests {
    func entry(_ n: Int, archived: Bool = false, deleted: Bool = false) -> IndexEntry {
        let t = Timestamp(seconds: 1_776_600_000)
        return IndexEntry(
            id: MemoID(String(format: "00000000-0000-0000-0000-%012d", n))!, modifiedTime: t,
            archivedAt: archived ? t : nil, deletedAt: deleted ? t : nil)
    }

    @Test func softDeletedIsNeverCountedAndArchivedIsApart() {
        let entries = [
            entry(1), entry(2), entry(3), entry(4), entry(5, archived: true),
            entry(6, deleted: true), entry(7, archived: true, deleted: true)
        ]
        #expect(MemoCounts.aggregate(entries) == MemoCounts(active: 4, archived: 1))
    }

    @Test func nothingCountsAsZero() {
        #expect(MemoCounts.aggregate([]) == MemoCounts(active: 0, archived: 0))
        #expect(MemoCounts.aggregate([entry(1, deleted: true)]) == MemoCounts())
    }
}

@Suite struct LibraryTests {
    @Test func sha256MatchesTheStandardVector() {
        #expect(SHA256.hex(of: Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(of: Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func sha256StreamsInPieces() {
        let hasher = SHA256()
        hasher.update(Data("a".utf8))
        hasher.update(Data("bc".utf8))
        #expect(hasher.finalize().hex == SHA256.hex(of: Data("abc".utf8)))
    }
}

@Suite struct IDMapTests {
    @Test func findsEveryIDItHoldsAndNoOther() {
        let ids = [idA, idB, idC, idD].map { MemoID($0)! }.sorted()
        let map = IDMap(sortedKeys: Array(ids.dropLast()), values: ["first", "second", "third"])
        #expect(ids.map { map[$0] } == ["first", "second", "third", nil])
        #expect(map.count == 3)
        #expect(IDMap<String>(sortedKeys: [], values: [])[ids[0]] == nil)
    }
}

extension IDMapTests {
    @Test func theUnionOfSortedListsHoldsEachIDOnceInOrder() {
        let ids = (0..<9).map { MemoID(String(format: "00000000-0000-4000-8000-%012d", $0))! }
        #expect(
            MemoID.union([[ids[1], ids[4], ids[7]], [], [ids[0], ids[4], ids[8]], [ids[1], ids[2], ids[7], ids[8]]])
                == [ids[0], ids[1], ids[2], ids[4], ids[7], ids[8]])
        #expect(MemoID.union([]) == [])
    }
}

@Suite struct IndexEntrySpellingTests {
    @Test(arguments: [idA, idA.lowercased(), "3f2504E0-4f89-11D3-9a0c-0305E82C3301"])
    func anEntryKeepsTheSpellingItWasGiven(_ spelling: String) {
        let entry = IndexEntry(id: MemoID(spelling)!, spelling: spelling, modifiedTime: Timestamp(seconds: 0))
        #expect(entry.spelling == spelling)
        for other in [idA, idA.lowercased(), "3f2504E0-4f89-11D3-9a0c-0305E82C3301"] {
            #expect((entry.spelledAs == IDSpelling(other)) == (other == spelling), "\(other)")
            #expect(IDSpelling(other).fileName(of: entry.id) == other + ".json")
        }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sorts records by their bytes (as `memcmp` orders them) while holding at
/// most about `memoryLimit` bytes of them. Beyond that, each sorted run goes
/// to an unlinked file in the scratch folder, and reading merges the runs, so
/// sorting 100,000 records costs no more memory than sorting 10,000.
/// Without a scratch folder everything stays in memory. Not `Sendable`.
final class SpillSort {
    private let scratch: String?
    private let memoryLimit: Int
    private var bytes: [UInt8] = []
    private var starts: [Int] = []
    private var fd: Int32 = -1
    private var runs: [Range<Int>] = []
    private var spilled = 0

    init(scratch: URL?, memoryLimit: Int) {
        self.scratch = scratch?.path
        self.memoryLimit = memoryLimit
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Adds one record.
    func append(_ record: Record) throws(OutputError) {
        starts.append(bytes.count)
        bytes += record.bytes
        if scratch != nil && bytes.count >= memoryLimit { try spill() }
    }

    /// The records added so far, in order of their bytes. Can be called
    /// more than once; records added later are not seen by earlier readers.
    func sorted() throws(OutputError) -> SortedRecords {
        guard fd >= 0 else {
            return SortedRecords(owner: self, held: sortedRanges().map { bytes[$0] }, cursors: [])
        }
        try spill()
        var cursors: [RunCursor] = []
        for run in runs { cursors.append(try RunCursor(fd: fd, run: run, path: scratch!)) }
        return SortedRecords(owner: self, held: [], cursors: cursors)
    }

    /// Whether `a` sorts before `b`, byte by byte.
    static func precedes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let common = memcmp(a.baseAddress!, b.baseAddress!, min(a.count, b.count))
        return common != 0 ? common < 0 : a.count < b.count
    }

    static func precedes(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in precedes(a, b) } }
    }

    /// Where each record held lies in `bytes`, in sorted order. Records are
    /// first ordered by their first eight bytes as one number (a memo id's
    /// first half, usually enough), and compared whole only where those are equal.
    private func sortedRanges() -> [Range<Int>] {
        let ends = starts.dropFirst() + [bytes.count]
        let ranges = zip(starts, ends).map { $0..<$1 }
        return bytes.withUnsafeBufferPointer { all in
            func record(_ index: Int) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: all[ranges[index]]) }
            var keys = ranges.indices.map { index in
                (prefix: record(index).prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (56 - 8 * $1.offset) }, index: index)
            }
            keys.sort { a, b in a.prefix != b.prefix ? a.prefix < b.prefix : Self.precedes(record(a.index), record(b.index)) }
            return keys.map { ranges[$0.index] }
        }
    }

    /// Writes the records held, sorted, as one run: each record as its
    /// length (4 bytes) and its bytes.
    private func spill() throws(OutputError) {
        guard !starts.isEmpty, let scratch else { return }
        if fd < 0 {
            let path = scratch + "/.reckon-sort-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
            unlink(path)
        }
        var run: [UInt8] = []
        run.reserveCapacity(bytes.count + 4 * starts.count)
        for range in sortedRanges() {
            let record = bytes[range]
            withUnsafeBytes(of: UInt32(record.count).littleEndian) { run += $0 }
            run += record
        }
        let failed = run.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let count = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(spilled + done))
                if count < 0 && errno == EINTR { continue }
                if count < 0 { return true }
                done += count
            }
            return false
        }
        if failed { throw OutputError(path: scratch, reason: AtomicFile.lastError()) }
        runs.append(spilled..<(spilled + run.count))
        spilled += run.count
        bytes = []
        starts = []
    }

    /// Reads one spilled run back through a small buffer.
    fileprivate struct RunCursor {
        let fd: Int32
        var run: Range<Int>
        let path: String
        var buffer: [UInt8] = []
        var at = 0
        var current: ArraySlice<UInt8>?

        init(fd: Int32, run: Range<Int>, path: String) throws(OutputError) {
            self.fd = fd
            self.run = run
            self.path = path
            try advance()
        }

        mutating func advance() throws(OutputError) {
            current = nil
            guard let length = try take(4).map({ $0.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) } }) else { return }
            current = try take(length)
        }

        /// The next `count` bytes of the run, or nil at its end.
        private mutating func take(_ count: Int) throws(OutputError) -> ArraySlice<UInt8>? {
            if buffer.count - at < count {
                guard !run.isEmpty else { return nil }
                let wanted = min(run.count, max(count, 1 << 16))
                var more = [UInt8](repeating: 0, count: wanted)
                let read = more.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, off_t(run.lowerBound)) }
                guard read == wanted else { throw OutputError(path: path, reason: "a sorted run could not be read back") }
                buffer = Array(buffer[at...]) + more
                at = 0
                run = (run.lowerBound + wanted)..<run.upperBound
            }
            defer { at += count }
            return buffer[at..<(at + count)]
        }
    }
}

/// Records read back from a `SpillSort` in order, one at a time.
final class SortedRecords {
    /// Keeps the spilled runs' file open while they are read.
    private let owner: SpillSort
    private var held: [ArraySlice<UInt8>]
    private var position = 0
    private var cursors: [SpillSort.RunCursor]

    fileprivate init(owner: SpillSort, held: [ArraySlice<UInt8>], cursors: [SpillSort.RunCursor]) {
        self.owner = owner
        self.held = held
        self.cursors = cursors
    }

    /// The next record, or nil after the last.
    func next() throws(OutputError) -> RecordReader? {
        guard !cursors.isEmpty else {
            guard position < held.count else { return nil }
            defer { position += 1 }
            return RecordReader(held[position])
        }
        var next: Int?
        for index in cursors.indices {
            guard let record = cursors[index].current else { continue }
            if next == nil || SpillSort.precedes(record, cursors[next!].current!) { next = index }
        }
        guard let next else { return nil }
        let record = RecordReader(cursors[next].current!)
        try cursors[next].advance()
        return record
    }
}

/// One record for `SpillSort`, built field by field. Fields that order the
/// records come first and are written so that their bytes sort as the
/// values do.
struct Record {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(96) }

    mutating func add(_ id: MemoID) {
        add(id.high)
        add(id.low)
    }

    mutating func add(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    mutating func add(_ value: Int) { add(UInt64(bitPattern: Int64(value))) }

    /// An optional instant: absent first, then in time order.
    mutating func add(_ time: Timestamp?) {
        guard let time else { return bytes.append(0) }
        bytes.append(1)
        add(UInt64(bitPattern: time.seconds) ^ (1 << 63))
        add(UInt64(time.nanoseconds))
    }

    /// Text that orders the record: its bytes and a 0 after them, so shorter
    /// text sorts first. The text must hold no 0 byte (names and paths).
    mutating func addOrdered(_ text: String) {
        bytes += text.utf8
        bytes.append(0)
    }

    /// Any text, or none: its length, then its bytes.
    mutating func add(_ text: String?) {
        guard let text else { return bytes.append(0) }
        bytes.append(1)
        add(text.utf8.count)
        bytes += text.utf8
    }

    mutating func add(_ digest: SHA256.Digest) {
        add(digest.words.0)
        add(digest.words.1)
        add(digest.words.2)
        add(digest.words.3)
    }
}

/// Reads a `Record`'s fields back in the order they were added.
struct RecordReader {
    private let bytes: ArraySlice<UInt8>
    private var at: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        at = bytes.startIndex
    }

    private mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        defer { at += count }
        return bytes[at..<(at + count)]
    }

    mutating func byte() -> UInt8 { take(1).first! }

    mutating func id() -> MemoID { MemoID(high: uint64(), low: uint64()) }

    mutating func uint64() -> UInt64 { take(8).reduce(0) { $0 << 8 | UInt64($1) } }

    mutating func int() -> Int { Int(Int64(bitPattern: uint64())) }

    mutating func timestamp() -> Timestamp? {
        guard take(1).first == 1 else { return nil }
        let seconds = Int64(bitPattern: uint64() ^ (1 << 63))
        return Timestamp(seconds: seconds, nanoseconds: Int32(uint64()))
    }

    mutating func orderedText() -> String {
        let end = bytes[at...].firstIndex(of: 0)!
        defer { at = end + 1 }
        return String(decoding: bytes[at..<end], as: UTF8.self)
    }

    mutating func text() -> String? {
        guard take(1).first == 1 else { return nil }
        let count = int()
        return String(decoding: take(count), as: UTF8.self)
    }

    mutating func digest() -> SHA256.Digest { SHA256.Digest(words: (uint64(), uint64(), uint64(), uint64())) }
}

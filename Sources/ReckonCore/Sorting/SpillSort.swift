import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A value `SpillSort` can write to disk and read back.
package protocol Spillable: Comparable {
    func write(to record: inout Record)
    init(from reader: inout RecordReader)
}

/// How many values a sort holds before it spills a run, unless told otherwise.
let spillRunLength = 8192

/// Sorts values while holding at most `runLength` of them. Beyond that, each
/// sorted run is written to an unlinked file in the scratch folder and
/// reading merges the runs, so sorting 100,000 values costs no more memory
/// than sorting 10,000. Without a scratch folder everything stays in memory
/// and nothing is encoded. Not `Sendable`.
package final class SpillSort<Value: Spillable> {
    private let scratch: String?
    private let runLength: Int
    private var held: [Value] = []
    private var fd: Int32 = -1
    private var runs: [Range<Int>] = []
    private var spilled = 0

    package init(scratch: URL?, runLength: Int) {
        self.scratch = scratch?.path
        self.runLength = max(1, runLength)
    }

    deinit { if fd >= 0 { close(fd) } }

    package func append(_ value: Value) throws(OutputError) {
        held.append(value)
        if scratch != nil && held.count >= runLength { try spill() }
    }

    /// The values added so far, in order. Can be called more than once;
    /// values added later are not seen by earlier readers.
    package func sorted() throws(OutputError) -> SortedValues<Value> {
        guard fd >= 0 else {
            held.sort()
            return SortedValues(owner: self, held: held, cursors: [])
        }
        try spill()
        var cursors: [RunCursor] = []
        for run in runs { cursors.append(try RunCursor(fd: fd, run: run, path: scratch!)) }
        return SortedValues(owner: self, held: [], cursors: cursors)
    }

    /// Writes the values held, sorted, as one run: each as its length
    /// (4 bytes) and its record.
    private func spill() throws(OutputError) {
        guard !held.isEmpty, let scratch else { return }
        if fd < 0 {
            let path = scratch + "/.reckon-sort-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
            unlink(path)
        }
        held.sort()
        var run: [UInt8] = []
        for value in held {
            var record = Record()
            value.write(to: &record)
            withUnsafeBytes(of: UInt32(record.bytes.count).littleEndian) { run += $0 }
            run += record.bytes
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
        held = []
    }

    /// Reads one spilled run back through a small buffer.
    struct RunCursor {
        let fd: Int32
        var run: Range<Int>
        let path: String
        var buffer: [UInt8] = []
        var at = 0
        var current: Value?

        init(fd: Int32, run: Range<Int>, path: String) throws(OutputError) {
            self.fd = fd
            self.run = run
            self.path = path
            try advance()
        }

        mutating func advance() throws(OutputError) {
            current = nil
            guard let length = try take(4).map({ $0.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) } }) else {
                return
            }
            var reader = RecordReader(try take(length)!)
            current = Value(from: &reader)
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

/// Values read back from a `SpillSort` in order, one at a time.
package final class SortedValues<Value: Spillable> {
    /// Keeps the spilled runs' file open while they are read.
    private let owner: SpillSort<Value>
    private var held: [Value]
    private var position = 0
    private var cursors: [SpillSort<Value>.RunCursor]

    fileprivate init(owner: SpillSort<Value>, held: [Value], cursors: [SpillSort<Value>.RunCursor]) {
        self.owner = owner
        self.held = held
        self.cursors = cursors
    }

    /// The next value, or nil after the last.
    package func next() throws(OutputError) -> Value? {
        guard !cursors.isEmpty else {
            guard position < held.count else { return nil }
            defer { position += 1 }
            return held[position]
        }
        var next: Int?
        for index in cursors.indices {
            guard let value = cursors[index].current else { continue }
            if next == nil || value < cursors[next!].current! { next = index }
        }
        guard let next else { return nil }
        let value = cursors[next].current!
        try cursors[next].advance()
        return value
    }
}

/// The bytes of one value on its way to disk, written field by field.
package struct Record {
    var bytes: [UInt8] = []

    mutating func add(_ id: MemoID) {
        add(id.high)
        add(id.low)
    }

    mutating func add(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    package mutating func add(_ value: Int) { add(UInt64(bitPattern: Int64(value))) }

    mutating func add(_ byte: UInt8) { bytes.append(byte) }

    mutating func add(_ time: Timestamp?) {
        guard let time else { return bytes.append(0) }
        bytes.append(1)
        add(UInt64(bitPattern: time.seconds))
        add(UInt64(UInt32(bitPattern: time.nanoseconds)))
    }

    package mutating func add(_ text: String?) {
        guard let text else { return bytes.append(0) }
        bytes.append(1)
        add(text.utf8.count)
        bytes += text.utf8
    }

    mutating func add(_ flag: Bool) { bytes.append(flag ? 1 : 0) }

    mutating func add(_ identity: FileIdentity?) {
        guard let identity else { return bytes.append(0) }
        bytes.append(1)
        add(identity.device)
        add(identity.inode)
        add(identity.size)
        add(UInt64(bitPattern: identity.modified))
        add(UInt64(bitPattern: identity.changed))
    }

    mutating func add(_ digest: SHA256.Digest) {
        add(digest.words.0)
        add(digest.words.1)
        add(digest.words.2)
        add(digest.words.3)
    }
}

/// Reads a `Record`'s fields back in the order they were added.
package struct RecordReader {
    private let bytes: ArraySlice<UInt8>
    private var at: Int

    package init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        at = bytes.startIndex
    }

    /// Whether a read asked for more bytes than were left.
    private(set) var overran = false

    /// Whether every byte was read and no read went past the end: how a
    /// record from a file reckon did not write itself is checked.
    var readWhole: Bool { !overran && at == bytes.endIndex }

    /// The next `count` bytes; past the end, zeros (for the fixed-size
    /// reads) and `overran` is set, so damaged bytes never stop the program.
    private mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.endIndex - at else {
            overran = true
            at = bytes.endIndex
            return ArraySlice(repeating: 0, count: (0...32).contains(count) ? count : 0)
        }
        defer { at += count }
        return bytes[at..<(at + count)]
    }

    mutating func byte() -> UInt8 { take(1).first! }

    mutating func id() -> MemoID { MemoID(high: uint64(), low: uint64()) }

    mutating func uint64() -> UInt64 { take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) } }

    package mutating func int() -> Int { Int(Int64(bitPattern: uint64())) }

    mutating func timestamp() -> Timestamp? {
        guard byte() == 1 else { return nil }
        let seconds = Int64(bitPattern: uint64())
        return Timestamp(seconds: seconds, nanoseconds: Int32(bitPattern: UInt32(truncatingIfNeeded: uint64())))
    }

    package mutating func text() -> String? {
        guard byte() == 1 else { return nil }
        let count = int()
        return String(decoding: take(count), as: UTF8.self)
    }

    mutating func digest() -> SHA256.Digest { SHA256.Digest(words: (uint64(), uint64(), uint64(), uint64())) }

    mutating func flag() -> Bool { byte() == 1 }

    mutating func identity() -> FileIdentity? {
        guard byte() == 1 else { return nil }
        return FileIdentity(
            device: uint64(), inode: uint64(), size: int(), modified: Int64(bitPattern: uint64()),
            changed: Int64(bitPattern: uint64()))
    }
}

/// Whether `a`'s UTF-8 bytes come before `b`'s: the order of the paths in
/// a manifest, compared with `memcmp` because an export sorts many.
package func utf8Precedes(_ a: String, _ b: String) -> Bool {
    var a = a
    var b = b
    return a.withUTF8 { x in
        b.withUTF8 { y in
            let common = min(x.count, y.count)
            let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
            return order != 0 ? order < 0 : x.count < y.count
        }
    }
}

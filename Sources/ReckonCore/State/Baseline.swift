import Foundation

/// One memo as a side held it: enough to tell, at the next run, whether it
/// changed on that side. Fixed size, so a side's 100,000 fingerprints cost
/// no allocation each.
package struct Fingerprint: Sendable, Equatable {
    var modifiedTime: Timestamp
    var archived: Bool
    var deleted: Bool
    /// Core Data's row version (`Z_OPT`), for a store's row.
    var rowVersion: Int64?
    /// FNV-1a of the change tag.
    var changeTag: UInt64?
    /// FNV-1a of every field the deep check compares; nil when the memo was
    /// not read (a quick run).
    var digest: UInt64?

    init(modifiedTime: Timestamp, archived: Bool, deleted: Bool, rowVersion: Int64?, changeTag: UInt64?, digest: UInt64?) {
        self.modifiedTime = modifiedTime
        self.archived = archived
        self.deleted = deleted
        self.rowVersion = rowVersion
        self.changeTag = changeTag
        self.digest = digest
    }

    /// A memo's fingerprint from its index entry and, in a deep check, what was read of its file.
    init(_ entry: IndexEntry, _ summary: MemoSummary?) {
        self.init(modifiedTime: entry.modifiedTime, archived: entry.isArchived, deleted: entry.isDeleted, rowVersion: entry.rowVersion,
                  changeTag: entry.changeTag.map { FNV64.of($0) }, digest: summary.map(Self.digest))
    }

    /// Counted: neither soft-deleted nor absent.
    var isLive: Bool { !deleted }

    /// FNV-1a of a summary's fields, each with a marker so that no two
    /// summaries run together into the same bytes. Part of the baseline's
    /// format: it may never change within one version.
    static func digest(_ summary: MemoSummary) -> UInt64 {
        var hash = FNV64()
        hash.add(text: summary.title)
        if let body = summary.bodySHA256 {
            hash.add(byte: 1)
            for word in [body.words.0, body.words.1, body.words.2, body.words.3] { hash.add(word: word) }
        } else {
            hash.add(byte: 0)
        }
        hash.add(word: UInt64(summary.tags.count))
        for tag in summary.tags { hash.add(text: tag) }
        for time in [summary.createdAt, summary.modifiedAt, summary.archivedAt, summary.deletedAt] { hash.add(time: time) }
        hash.add(byte: summary.pinned ? 1 : 0)
        hash.add(text: summary.changeTag)
        return hash.value
    }

    /// How a memo moved on one side between two fingerprints (nil: absent);
    /// nil when it did not. A soft-deleted memo and an absent one are the
    /// same to the user. A digest or a row version is compared only when
    /// both have one (a quick run reads no memo file).
    static func change(from before: Fingerprint?, to now: Fingerprint?) -> SinceLastRun.Change? {
        let wasLive = before?.isLive ?? false, isLive = now?.isLive ?? false
        switch (wasLive, isLive) {
        case (false, false): return nil
        case (false, true): return .added
        case (true, false): return .deleted
        case (true, true):
            let before = before!, now = now!
            if before.archived != now.archived { return now.archived ? .archived : .unarchived }
            func differ<Value: Equatable>(_ a: Value?, _ b: Value?) -> Bool { a != nil && b != nil && a != b }
            let edited = before.modifiedTime != now.modifiedTime || before.changeTag != now.changeTag
                || differ(before.digest, now.digest) || differ(before.rowVersion, now.rowVersion)
            return edited ? .edited : nil
        }
    }
}

/// The 64-bit FNV-1a hash: cheap, stable across runs and machines (Swift's
/// own `Hasher` is seeded per process), and enough to notice a change.
struct FNV64 {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    mutating func add(word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { add(byte: UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    mutating func add(text: String?) {
        guard var text else { return add(byte: 0) }
        add(byte: 1)
        add(word: UInt64(text.utf8.count))
        text.withUTF8 { for byte in $0 { add(byte: byte) } }
    }

    mutating func add(time: Timestamp?) {
        guard let time else { return add(byte: 0) }
        add(byte: 1)
        add(word: UInt64(bitPattern: time.seconds))
        add(word: UInt64(UInt32(bitPattern: time.nanoseconds)))
    }

    static func of(_ text: String) -> UInt64 {
        var hash = FNV64()
        hash.add(text: text)
        return hash.value
    }
}

/// How many memos a side gained, edited, archived, unarchived and lost
/// since its baseline (`sides[].sinceLastRun` in `report.json`).
public struct SinceLastRun: Sendable, Equatable, Codable {
    public var added = 0
    public var edited = 0
    public var archived = 0
    public var unarchived = 0
    public var deleted = 0

    public enum Change: Sendable {
        case added, edited, archived, unarchived, deleted
    }

    public init() {}

    mutating func count(_ change: Change) {
        switch change {
        case .added: added += 1
        case .edited: edited += 1
        case .archived: archived += 1
        case .unarchived: unarchived += 1
        case .deleted: deleted += 1
        }
    }
}

/// Which side a baseline belongs to: its kind and where it is (the real
/// path of a folder or store; for a remote the first 16 hex digits of the
/// SHA-256 of its string, which never holds a secret), and how reports
/// name it.
package struct SideIdentity: Sendable, Equatable {
    var kind: String
    var place: String
    /// The side's path as given (a remote's secrets masked); not compared.
    var shown: String

    init(kind: String, place: String, shown: String) {
        self.kind = kind
        self.place = place
        self.shown = shown
    }

    init(_ spec: SideSpec) {
        switch spec.location {
        case .folder(let url):
            self.init(kind: "folder", place: realPath(url.path), shown: spec.path)
        case .store(let source):
            self.init(kind: "store", place: realPath(source.url.path) + (source.app.map { "#app=" + $0 } ?? ""), shown: spec.path)
        case .rclone(let source):
            self.init(kind: "rclone", place: "sha256:" + Rclone.cacheName(of: source.remote), shown: spec.path)
        }
    }

    func isSameSide(as other: SideIdentity) -> Bool { kind == other.kind && place == other.place }
}

/// One side's listing as a deep run left it: the fingerprint of every memo,
/// the side it belongs to, and the run's time. Kept in the pipeline's state
/// folder as `baseline-<side name>.txt`, a small versioned text file:
///
/// ```
/// reckon-baseline 1
/// kind folder
/// place /srv/drive/60dMemo
/// shown ../drive
/// time 2026-04-19T12:00:00Z
/// alarm-since 2026-04-20T12:00:00Z      (only while an alarm holds the baseline)
/// memos 2
/// 3f2504e04f8911d39a0c0305e82c3301 1776600000 0 0 - - 9a3c…
/// e4eaaaf2d14211e1b3e4080027620cdd 1776513600 500000000 1 17 4f2e… 0b81…
/// ```
///
/// A memo line is the id's 32 hex digits, the modification time (seconds
/// since 1970 and nanoseconds), the state (1 archived, 2 deleted, added),
/// the row version, and the change tag's and the fields' FNV-1a in 16 hex
/// digits (`-` for none), sorted by id. Header values are percent-escaped.
package struct Baseline: Sendable {
    static let version = 1
    static let magic = "reckon-baseline"

    var side: SideIdentity
    /// The start of the run that saved it.
    var time: Timestamp
    /// The first run that found more memos gone than the alarm allows; set
    /// while the baseline is held back for that alarm.
    var alarmSince: Timestamp?
    var memos: IDMap<Fingerprint>

    /// The file of the side named `name` in a state folder.
    static func url(in stateDir: URL, side name: String) -> URL {
        stateDir.appendingPathComponent("baseline-\(name).txt")
    }

    /// What was found where a side's baseline is kept.
    enum Found: Sendable {
        case none
        case baseline(Baseline)
        /// A file that cannot be used, and why, in words.
        case unreadable(String)
    }

    /// Reads the baseline file at `url`.
    static func read(_ url: URL) -> Found {
        guard FileKind(path: url.path) != .missing else { return .none }
        let data: Data
        do {
            data = try readRegularFile(atPath: url.path, limit: 1 << 32)
        } catch {
            return .unreadable("it \(error.message)")
        }
        do {
            return .baseline(try parse(data))
        } catch {
            return .unreadable(error.message)
        }
    }

    struct ParseError: Error {
        var message: String
    }

    /// The file's bytes, or why they are not a baseline this reckon reads.
    static func parse(_ data: Data) throws(ParseError) -> Baseline {
        try data.withUnsafeBytes { bytes in Result { () throws(ParseError) in try parse(bytes: bytes) } }.get()
    }

    private static func parse(bytes: UnsafeRawBufferPointer) throws(ParseError) -> Baseline {
        var reader = LineReader(bytes: bytes)
        func header(_ key: String) throws(ParseError) -> String {
            guard let line = reader.nextLine(), let text = String(validating: line, as: UTF8.self),
                  text.hasPrefix(key + " ") else {
                throw ParseError(message: "line \(reader.lineNumber) should start with '\(key)'")
            }
            return String(text.dropFirst(key.count + 1))
        }
        let version = try header(magic)
        guard let number = Int(version) else { throw ParseError(message: "it is not a reckon baseline") }
        guard number == Self.version else {
            throw ParseError(message: number > Self.version ? "it was written by a newer reckon (version \(number))" : "its version \(number) is not known")
        }
        let kind = try header("kind"), place = try header("place"), shown = try header("shown")
        guard let time = Timestamp(iso8601: try header("time")) else { throw ParseError(message: "line \(reader.lineNumber): not a time") }
        var alarmSince: Timestamp?
        if reader.peekStarts(with: "alarm-since ") {
            guard let since = Timestamp(iso8601: try header("alarm-since")) else { throw ParseError(message: "line \(reader.lineNumber): not a time") }
            alarmSince = since
        }
        guard let count = Int(try header("memos")), count >= 0 else { throw ParseError(message: "line \(reader.lineNumber): not a number of memos") }
        var ids: [MemoID] = []
        var fingerprints: [Fingerprint] = []
        ids.reserveCapacity(min(count, bytes.count / 40))
        fingerprints.reserveCapacity(min(count, bytes.count / 40))
        while let line = reader.nextLine() {
            guard let (id, fingerprint) = memoLine(line), ids.last.map({ $0 < id }) ?? true else {
                throw ParseError(message: "line \(reader.lineNumber) is not a memo's fingerprint in id order")
            }
            ids.append(id)
            fingerprints.append(fingerprint)
        }
        guard ids.count == count else { throw ParseError(message: "it lists \(ids.count) memos where its header says \(count)") }
        return Baseline(side: SideIdentity(kind: unescaped(kind), place: unescaped(place), shown: unescaped(shown)), time: time,
                        alarmSince: alarmSince, memos: IDMap(sortedKeys: ids, values: fingerprints))
    }

    /// The file's bytes.
    var data: Data {
        var out: [UInt8] = []
        out.reserveCapacity(200 + memos.count * 90)
        let header = "\(Self.magic) \(Self.version)\nkind \(escaped(side.kind))\nplace \(escaped(side.place))\nshown \(escaped(side.shown))\n"
            + "time \(time.iso8601)\n" + (alarmSince.map { "alarm-since \($0.iso8601)\n" } ?? "") + "memos \(memos.count)\n"
        out += header.utf8
        for (id, print) in memos.pairs {
            appendHex(id.high, to: &out)
            appendHex(id.low, to: &out)
            out.append(0x20)
            appendDecimal(print.modifiedTime.seconds, to: &out)
            out.append(0x20)
            appendDecimal(Int64(print.modifiedTime.nanoseconds), to: &out)
            out.append(0x20)
            out.append(0x30 + (print.archived ? 1 : 0) + (print.deleted ? 2 : 0))
            out.append(0x20)
            if let row = print.rowVersion { appendDecimal(row, to: &out) } else { out.append(0x2D) }
            for hash in [print.changeTag, print.digest] {
                out.append(0x20)
                if let hash { appendHex(hash, to: &out) } else { out.append(0x2D) }
            }
            out.append(0x0A)
        }
        return Data(out)
    }

    /// One memo line: id, seconds, nanoseconds, state, row version, change tag, digest.
    private static func memoLine(_ line: UnsafeRawBufferPointer) -> (MemoID, Fingerprint)? {
        let fields = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard fields.count == 7, fields[0].count == 32, let high = hex(fields[0].prefix(16)), let low = hex(fields[0].suffix(16)),
              let seconds = decimal(fields[1]), let nanoseconds = decimal(fields[2]), (0..<1_000_000_000).contains(nanoseconds),
              fields[3].count == 1, let state = fields[3].first, (0x30...0x33).contains(state) else { return nil }
        func optional<Value>(_ field: Slice<UnsafeRawBufferPointer>, _ parse: (Slice<UnsafeRawBufferPointer>) -> Value?) -> Value?? {
            field.elementsEqual([0x2D]) ? .some(nil) : parse(field).map { .some($0) }
        }
        guard let rowVersion = optional(fields[4], decimal), let changeTag = optional(fields[5], { $0.count == 16 ? hex($0) : nil }),
              let digest = optional(fields[6], { $0.count == 16 ? hex($0) : nil }) else { return nil }
        return (MemoID(high: high, low: low),
                Fingerprint(modifiedTime: Timestamp(seconds: seconds, nanoseconds: Int32(nanoseconds)), archived: state & 1 == 1,
                            deleted: state & 2 == 2, rowVersion: rowVersion, changeTag: changeTag, digest: digest))
    }

    private static func hex(_ digits: Slice<UnsafeRawBufferPointer>) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 16 else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte - 0x30
            case 0x61...0x66: nibble = byte - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }

    private static func decimal(_ digits: Slice<UnsafeRawBufferPointer>) -> Int64? {
        var rest = digits[...]
        let negative = rest.first == 0x2D
        if negative { rest = rest.dropFirst() }
        guard !rest.isEmpty, rest.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in rest {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        return negative ? -value : value
    }

    private func appendHex(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 60, through: 0, by: -4) { out.append(Self.hexDigits[Int((value >> UInt64(shift)) & 15)]) }
    }

    private func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2D) }
        var magnitude = value.magnitude
        var digits: [UInt8] = []
        repeat {
            digits.append(0x30 + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out += digits.reversed()
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

/// Header values percent-escaped: bytes outside printable ASCII, spaces and `%`.
private func escaped(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        if byte > 0x20 && byte < 0x7F && byte != 0x25 {
            out.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }
    return out
}

private func unescaped(_ text: String) -> String {
    var bytes: [UInt8] = []
    var utf8 = text.utf8.makeIterator()
    while let byte = utf8.next() {
        if byte == 0x25, let a = utf8.next(), let b = utf8.next(), let value = UInt8(String(decoding: [a, b], as: UTF8.self), radix: 16) {
            bytes.append(value)
        } else {
            bytes.append(byte)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Lines of a buffer, without their newlines; counts them from 1.
private struct LineReader {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    var lineNumber = 0

    mutating func nextLine() -> UnsafeRawBufferPointer? {
        guard position < bytes.count else { return nil }
        let start = position
        while position < bytes.count && bytes[position] != 0x0A { position += 1 }
        let line = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
        if position < bytes.count { position += 1 }
        lineNumber += 1
        return line
    }

    func peekStarts(with prefix: String) -> Bool {
        let rest = bytes[position...]
        return rest.starts(with: prefix.utf8)
    }
}

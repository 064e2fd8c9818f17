import Foundation

/// One memo as a side held it: enough to tell, at the next run, whether it
/// changed on that side. Fixed size, so a side's 100,000 fingerprints cost
/// no allocation each.
package struct Fingerprint: Sendable, Equatable {
    package var modifiedTime: Timestamp
    package var archived: Bool
    package var deleted: Bool
    /// Core Data's row version (`Z_OPT`), for a store's row.
    package var rowVersion: Int64?
    /// FNV-1a of the change tag.
    package var changeTag: UInt64?
    /// FNV-1a of every field the deep check compares; nil when the memo was
    /// not read (a quick run).
    package var digest: UInt64?

    package init(modifiedTime: Timestamp, archived: Bool, deleted: Bool, rowVersion: Int64?, changeTag: UInt64?, digest: UInt64?) {
        self.modifiedTime = modifiedTime
        self.archived = archived
        self.deleted = deleted
        self.rowVersion = rowVersion
        self.changeTag = changeTag
        self.digest = digest
    }

    /// A memo's fingerprint from its index entry and, in a deep check, the digest of what was read of its file.
    init(_ entry: IndexEntry, digest: UInt64?) {
        self.init(
            modifiedTime: entry.modifiedTime, archived: entry.isArchived, deleted: entry.isDeleted, rowVersion: entry.rowVersion,
            changeTag: entry.changeTag.map { FNV64.of($0) }, digest: digest)
    }

    /// Counted: neither soft-deleted nor absent.
    var isLive: Bool { !deleted }

    /// FNV-1a of a summary's fields, each with a marker so that no two
    /// summaries run together into the same bytes. Part of the baseline's
    /// format: it may never change within one version.
    package static func digest(_ summary: MemoSummary) -> UInt64 {
        var hash = FNV64()
        hash.add(text: summary.title)
        if let body = summary.bodySHA256 {
            hash.add(byte: 1)
            hash.add(word: body.words.0)
            hash.add(word: body.words.1)
            hash.add(word: body.words.2)
            hash.add(word: body.words.3)
        } else {
            hash.add(byte: 0)
        }
        hash.add(word: UInt64(summary.tags.count))
        for tag in summary.tags { hash.add(text: tag) }
        hash.add(time: summary.createdAt)
        hash.add(time: summary.modifiedAt)
        hash.add(time: summary.archivedAt)
        hash.add(time: summary.deletedAt)
        hash.add(byte: summary.pinned ? 1 : 0)
        hash.add(text: summary.changeTag)
        return hash.value
    }

    /// How a memo moved on one side between two fingerprints (nil: absent);
    /// nil when it did not. A soft-deleted memo and an absent one are the
    /// same to the user. A digest or a row version is compared only when
    /// both have one (a quick run reads no memo file).
    package static func change(from before: Fingerprint?, to now: Fingerprint?) -> SinceLastRun.Change? {
        let wasLive = before?.isLive ?? false
        let isLive = now?.isLive ?? false
        switch (wasLive, isLive) {
        case (false, false): return nil
        case (false, true): return .added
        case (true, false): return .deleted
        case (true, true):
            let before = before!
            let now = now!
            if before.archived != now.archived { return now.archived ? .archived : .unarchived }
            func differ<Value: Equatable>(_ a: Value?, _ b: Value?) -> Bool { a != nil && b != nil && a != b }
            let edited =
                before.modifiedTime != now.modifiedTime || before.changeTag != now.changeTag
                || differ(before.digest, now.digest) || differ(before.rowVersion, now.rowVersion)
            return edited ? .edited : nil
        }
    }
}

/// How many memos a side gained, edited, archived, unarchived and lost
/// since its baseline (`sides[].sinceLastRun` in `report.json`).
package struct SinceLastRun: Sendable, Equatable, Codable {
    package var added = 0
    package var edited = 0
    package var archived = 0
    package var unarchived = 0
    package var deleted = 0

    package enum Change: Sendable {
        case added, edited, archived, unarchived, deleted
    }

    package init() {}

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
    var kind: SideKindName
    var place: String
    /// The side's path as given (a remote's secrets masked); not compared.
    package var shown: String

    package init(kind: SideKindName, place: String, shown: String) {
        self.kind = kind
        self.place = place
        self.shown = shown
    }

    init(_ spec: SideSpec) {
        self.init(kind: SideKindName(type(of: spec.kind)), place: spec.kind.place, shown: spec.path)
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

    package var side: SideIdentity
    /// The start of the run that saved it.
    package var time: Timestamp
    /// The first run that found more memos gone than the alarm allows; set
    /// while the baseline is held back for that alarm.
    package var alarmSince: Timestamp?
    package var memos: IDMap<Fingerprint>

    /// The file of the side named `name` in a state folder.
    static func url(in stateDir: URL, side name: String) -> URL {
        stateDir.appendingPathComponent("baseline-\(name).txt")
    }

    /// Reads the baseline file at `url`.
    package static func read(_ url: URL) -> StateFile<Baseline> { StateFile.read(url, parse: parse) }

    /// The file's bytes, or why they are not a baseline this reckon reads.
    package static func parse(_ data: Data) throws(StateFileError) -> Baseline {
        try data.withUnsafeBytes { bytes in Result { () throws(StateFileError) in try parse(bytes: bytes) } }.get()
    }

    private static func parse(bytes: UnsafeRawBufferPointer) throws(StateFileError) -> Baseline {
        var reader = LineReader(bytes: bytes)
        func header(_ key: String) throws(StateFileError) -> String {
            guard let line = reader.nextLine(), let text = String(validating: line, as: UTF8.self),
                text.hasPrefix(key + " ")
            else {
                throw StateFileError(message: "line \(reader.lineNumber) should start with '\(key)'")
            }
            return String(text.dropFirst(key.count + 1))
        }
        let version = try header(magic)
        guard let number = Int(version) else { throw StateFileError(message: "it is not a reckon baseline") }
        guard number == Self.version else {
            throw StateFileError(
                message: number > Self.version ? "it was written by a newer reckon (version \(number))" : "its version \(number) is not known")
        }
        let kind = try header("kind")
        let place = try header("place")
        let shown = try header("shown")
        guard let time = Timestamp(iso8601: try header("time")) else { throw StateFileError(message: "line \(reader.lineNumber): not a time") }
        var alarmSince: Timestamp?
        if reader.peekStarts(with: "alarm-since ") {
            guard let since = Timestamp(iso8601: try header("alarm-since")) else {
                throw StateFileError(message: "line \(reader.lineNumber): not a time")
            }
            alarmSince = since
        }
        guard let count = Int(try header("memos")), count >= 0 else {
            throw StateFileError(message: "line \(reader.lineNumber): not a number of memos")
        }
        var ids: [MemoID] = []
        var fingerprints: [Fingerprint] = []
        ids.reserveCapacity(min(count, bytes.count / 40))
        fingerprints.reserveCapacity(min(count, bytes.count / 40))
        var scanner = MemoLineScanner(bytes: bytes, position: reader.position)
        var line = reader.lineNumber
        while !scanner.atEnd {
            line += 1
            guard let (id, fingerprint) = scanner.memoLine(), ids.last.map({ $0 < id }) ?? true else {
                throw StateFileError(message: "line \(line) is not a memo's fingerprint in id order")
            }
            ids.append(id)
            fingerprints.append(fingerprint)
        }
        guard ids.count == count else { throw StateFileError(message: "it lists \(counted(ids.count, "memo")) where its header says \(count)") }
        return Baseline(
            side: SideIdentity(kind: SideKindName(decoding: unescaped(kind)), place: unescaped(place), shown: unescaped(shown)), time: time,
            alarmSince: alarmSince, memos: IDMap(sortedKeys: ids, values: fingerprints))
    }

    /// The file's bytes.
    package var data: Data {
        let header =
            "\(Self.magic) \(Self.version)\nkind \(escaped(side.kind.name))\nplace \(escaped(side.place))\nshown \(escaped(side.shown))\n"
            + "time \(time.iso8601)\n" + (alarmSince.map { "alarm-since \($0.iso8601)\n" } ?? "") + "memos \(memos.count)\n"
        // A memo line is at most 32 + 20 + 9 + 1 + 20 + 16 + 16 bytes and 7 separators.
        var data = Data(count: header.utf8.count + memos.count * 121)
        let written = data.withUnsafeMutableBytes { bytes in
            var out = ByteWriter(buffer: bytes.bindMemory(to: UInt8.self))
            for byte in header.utf8 { out.put(byte) }
            for index in memos.keys.indices {
                let id = memos.keys[index]
                let print = memos.values[index]
                out.hex(id.high)
                out.hex(id.low)
                out.put(0x20)
                out.decimal(print.modifiedTime.seconds)
                out.put(0x20)
                out.decimal(Int64(print.modifiedTime.nanoseconds))
                out.put(0x20)
                out.put(0x30 + (print.archived ? 1 : 0) + (print.deleted ? 2 : 0))
                out.put(0x20)
                if let row = print.rowVersion { out.decimal(row) } else { out.put(0x2D) }
                out.put(0x20)
                if let tag = print.changeTag { out.hex(tag) } else { out.put(0x2D) }
                out.put(0x20)
                if let digest = print.digest { out.hex(digest) } else { out.put(0x2D) }
                out.put(0x0A)
            }
            return out.count
        }
        data.count = written
        return data
    }
}

/// Writes bytes into a buffer known to be large enough (a baseline's, an agreement's).
struct ByteWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    var count = 0

    mutating func put(_ byte: UInt8) {
        buffer[count] = byte
        count += 1
    }

    mutating func put(_ text: StaticString) {
        text.withUTF8Buffer { bytes in put(bytes) }
    }

    mutating func put(_ bytes: some Collection<UInt8>) {
        for byte in bytes { put(byte) }
    }

    /// 16 hex digits in small letters.
    mutating func hex(_ value: UInt64) {
        for shift in stride(from: 60, through: 0, by: -4) {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 15
            put(nibble < 10 ? 0x30 + nibble : 0x57 + nibble)
        }
    }

    /// Digits written from the last, dividing by the constant 10 only (a
    /// multiplication once compiled; a division by a variable costs tens of cycles).
    mutating func decimal(_ value: Int64) {
        if value < 0 { put(0x2D) }
        var rest = value.magnitude
        var digits = 1
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        rest = value.magnitude
        for position in stride(from: count + digits - 1, through: count, by: -1) {
            buffer[position] = 0x30 + UInt8(rest % 10)
            rest /= 10
        }
        count += digits
    }
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

/// Reads memo lines (`<id> <seconds> <nanoseconds> <state> <row version>
/// <change tag> <digest>`) byte by byte, with no allocation per line.
private struct MemoLineScanner {
    let bytes: UnsafeRawBufferPointer
    var position: Int

    var atEnd: Bool { position >= bytes.count }

    /// The next line, through its newline; nil when it is not a memo line.
    mutating func memoLine() -> (MemoID, Fingerprint)? {
        guard let high = hex(), let low = hex(), space(), let seconds = decimal(), space(),
            let nanoseconds = decimal(), (0..<1_000_000_000).contains(nanoseconds), space(),
            position < bytes.count, (0x30...0x33).contains(bytes[position])
        else { return nil }
        let state = bytes[position] - 0x30
        position += 1
        guard space(), let rowVersion = optionalDecimal(), space(), let changeTag = optionalHex(), space(), let digest = optionalHex(),
            position < bytes.count, bytes[position] == 0x0A
        else { return nil }
        position += 1
        return (
            MemoID(high: high, low: low),
            Fingerprint(
                modifiedTime: Timestamp(seconds: seconds, nanoseconds: Int32(nanoseconds)), archived: state & 1 == 1,
                deleted: state & 2 == 2, rowVersion: rowVersion, changeTag: changeTag, digest: digest)
        )
    }

    mutating func space() -> Bool {
        guard position < bytes.count, bytes[position] == 0x20 else { return false }
        position += 1
        return true
    }

    /// Exactly 16 hex digits in small letters.
    mutating func hex() -> UInt64? {
        guard position + 16 <= bytes.count else { return nil }
        var value: UInt64 = 0
        for index in position..<position + 16 {
            let digit = bytes[index] &- 0x30
            let letter = bytes[index] &- 0x61
            guard digit < 10 || letter < 6 else { return nil }
            value = value << 4 | UInt64(digit < 10 ? digit : letter &+ 10)
        }
        position += 16
        return value
    }

    /// A whole number of at most 18 digits, perhaps with a minus sign.
    mutating func decimal() -> Int64? {
        let negative = position < bytes.count && bytes[position] == 0x2D
        if negative { position += 1 }
        let start = position
        var value: Int64 = 0
        while position < bytes.count, position - start < 18, (0x30...0x39).contains(bytes[position]) {
            value = value * 10 + Int64(bytes[position] - 0x30)
            position += 1
        }
        guard position > start, position == bytes.count || !(0x30...0x39).contains(bytes[position]) else { return nil }
        return negative ? -value : value
    }

    /// `-` for none, else a whole number; nil when neither is there.
    mutating func optionalDecimal() -> Int64?? {
        dash() ? .some(nil) : decimal().map { .some($0) }
    }

    /// `-` for none, else 16 hex digits; nil when neither is there.
    mutating func optionalHex() -> UInt64?? {
        dash() ? .some(nil) : hex().map { .some($0) }
    }

    /// Whether a field is `-`, for none (then read).
    mutating func dash() -> Bool {
        guard position < bytes.count, bytes[position] == 0x2D,
            position + 1 == bytes.count || bytes[position + 1] == 0x20 || bytes[position + 1] == 0x0A
        else { return false }
        position += 1
        return true
    }
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

extension Fingerprint {
    /// The fingerprint as a report and a choices file carry it:
    /// `seconds.nanoseconds-state-rowVersion-changeTag-digest`, with `_` for
    /// what a side has not (a row version off a store, a digest in a quick
    /// check). Read back by `init(token:)`.
    package var token: String {
        func hex(_ value: UInt64?) -> String {
            guard let value else { return "_" }
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        let nanoseconds = String(modifiedTime.nanoseconds)
        let state = (archived ? 1 : 0) + (deleted ? 2 : 0)
        return "\(modifiedTime.seconds).\(String(repeating: "0", count: 9 - nanoseconds.count))\(nanoseconds)-\(state)-"
            + "\(rowVersion.map(String.init) ?? "_")-\(hex(changeTag))-\(hex(digest))"
    }

    /// A fingerprint read back from its `token`; nil when the text is not one.
    package init?(token: String) {
        let parts = token.split(separator: "-", omittingEmptySubsequences: false)
        let time = parts.first?.split(separator: ".", omittingEmptySubsequences: false) ?? []
        guard parts.count == 5, time.count == 2, time[1].count == 9, let seconds = Int64(time[0]), let nanoseconds = Int32(time[1]),
            nanoseconds >= 0, let state = Int(parts[1]), (0...3).contains(state), parts[1].count == 1
        else { return nil }
        func optional<Value>(_ part: Substring, _ read: (Substring) -> Value?) -> Value?? {
            part == "_" ? .some(nil) : read(part).map { .some($0) }
        }
        guard let rowVersion = optional(parts[2], { Int64($0) }),
            let changeTag = optional(parts[3], { $0.count == 16 ? UInt64($0, radix: 16) : nil }),
            let digest = optional(parts[4], { $0.count == 16 ? UInt64($0, radix: 16) : nil })
        else { return nil }
        self.init(
            modifiedTime: Timestamp(seconds: seconds, nanoseconds: nanoseconds), archived: state & 1 == 1, deleted: state & 2 == 2,
            rowVersion: rowVersion, changeTag: changeTag, digest: digest)
    }
}

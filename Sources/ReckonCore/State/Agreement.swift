import Foundation

/// What the local side and one remote last held equal, memo by memo: each
/// side's fingerprint of the memo then (its state, times, change tag and the
/// digest of every field the deep check compares; never a store's row
/// version, which means nothing beside a folder's) and when they agreed.
/// A plan takes its direction from it: the side whose fingerprint moved
/// since they agreed is the side that changed the memo.
///
/// Kept in the state folder as `agreement-<remote name>.json`:
///
/// ```json
/// {
///   "schemaVersion": 1,
///   "local": {"kind": "store", "place": "/srv/app/default.store", "shown": "../store"},
///   "remote": {"kind": "folder", "place": "/srv/drive/60dMemo", "shown": "../drive"},
///   "memos": [
///     {"id": "3f2504e0-…", "agreedAt": "2026-11-28T02:00:00Z", "state": "active",
///      "local": "1776600000.000000000-0-_-_-9a3c…", "remote": "1776600000.000000000-0-_-_-9a3c…"}
///   ]
/// }
/// ```
///
/// A side's fingerprint is `null` where it holds no entry for a memo agreed as deleted.
package struct Agreement: Sendable {
    static let schemaVersion = 1

    /// One memo as both sides last held it equal.
    package struct Entry: Sendable, Equatable {
        /// The local side's fingerprint then; nil: it held no entry (agreed as deleted).
        package var local: Fingerprint?
        package var remote: Fingerprint?
        /// When they were last seen equal: the start of that deep run, or the apply that made them so.
        package var time: Timestamp

        package init(local: Fingerprint?, remote: Fingerprint?, time: Timestamp) {
            self.local = local.map(Self.comparable)
            self.remote = remote.map(Self.comparable)
            self.time = time
        }

        /// A fingerprint without its row version, which a folder has not.
        static func comparable(_ print: Fingerprint) -> Fingerprint {
            var print = print
            print.rowVersion = nil
            return print
        }

        /// The state both sides held: `deleted` when neither held it live.
        package var state: StaticString {
            guard let live = local?.isLive == true ? local : remote?.isLive == true ? remote : nil else { return "deleted" }
            return live.archived ? "archived" : "active"
        }

        /// Whether `role`'s side moved since the agreement, to `now` (nil: no entry now).
        package func moved(_ role: SideRole, to now: Fingerprint?) -> Bool {
            Fingerprint.change(from: role == .local ? local : remote, to: now.map(Self.comparable)) != nil
        }
    }

    package var local: SideIdentity
    package var remote: SideIdentity
    package var memos: IDMap<Entry>

    package init(local: SideIdentity, remote: SideIdentity, memos: IDMap<Entry> = IDMap()) {
        self.local = local
        self.remote = remote
        self.memos = memos
    }

    /// The file of the pair whose remote is named `remote` in a state folder.
    package static func url(in stateDir: URL, remote: String) -> URL {
        stateDir.appendingPathComponent("agreement-\(remote).json")
    }

    /// Whether this agreement is of the pair `local`, `remote`.
    func isOf(local: SideIdentity, remote: SideIdentity) -> Bool {
        self.local.isSameSide(as: local) && self.remote.isSameSide(as: remote)
    }

    /// Reads the agreement file at `url`.
    package static func read(_ url: URL) -> StateFile<Agreement> { StateFile.read(url, parse: parse) }

    /// The file's bytes, or why they are not an agreement this reckon reads.
    /// The sides and the version are read as JSON; the memos, one a line as
    /// `data` writes them, byte by byte (100,000 of them are read every night).
    package static func parse(_ data: Data) throws(StateFileError) -> Agreement {
        try data.withUnsafeBytes { bytes in Result { () throws(StateFileError) in try parse(bytes: bytes) } }.get()
    }

    private static func parse(bytes: UnsafeRawBufferPointer) throws(StateFileError) -> Agreement {
        let marker = Array("\"memos\": [".utf8)
        let at = bytes.prefix(1 << 16).firstRange(of: marker)?.lowerBound
        // The head alone, or, in a file reckon did not write, the whole, for its version.
        let head = at.map { Data(bytes[..<$0]) + Data("\"memos\": []}".utf8) } ?? Data(bytes)
        guard case .object(let top)? = try? JSONValue.parse(head) else { throw StateFileError(message: "it is not a JSON object") }
        guard case .number(let text)? = top["schemaVersion"], let version = Int(text) else {
            throw StateFileError(message: "it has no schemaVersion")
        }
        guard version == schemaVersion else {
            throw StateFileError(
                message: version > schemaVersion
                    ? "it was written by a newer reckon (schemaVersion \(version))" : "its schemaVersion \(version) is not known")
        }
        func side(_ key: String) throws(StateFileError) -> SideIdentity {
            guard case .object(let side)? = top[key], case .string(let kind)? = side["kind"], case .string(let place)? = side["place"],
                case .string(let shown)? = side["shown"]
            else { throw StateFileError(message: "its \"\(key)\" is not a side (kind, place, shown)") }
            return SideIdentity(kind: SideKindName(decoding: kind), place: place, shown: shown)
        }
        let (local, remote) = (try side("local"), try side("remote"))
        guard let at else { throw StateFileError(message: "it is not an agreement as reckon writes one (its sides, then its memos)") }
        var scanner = AgreementScanner(bytes: bytes, position: at + marker.count)
        var ids: [MemoID] = []
        var entries: [Entry] = []
        ids.reserveCapacity(bytes.count / 220)
        entries.reserveCapacity(bytes.count / 220)
        while let (id, entry) = scanner.memo(first: ids.isEmpty) {
            guard ids.last.map({ $0 < id }) ?? true else { break }
            ids.append(id)
            entries.append(entry)
        }
        guard scanner.end(empty: ids.isEmpty) else {
            throw StateFileError(message: "memos[\(ids.count)] is not a memo's agreement, in id order, as reckon writes one")
        }
        return Agreement(local: local, remote: remote, memos: IDMap(sortedKeys: ids, values: entries))
    }

    /// The file's bytes: the sides, then one line per memo, sorted by id,
    /// written byte by byte into a buffer made once (a line is at most 300 bytes).
    package var data: Data {
        var head: [UInt8] = []
        func side(_ identity: SideIdentity) {
            head.append(contentsOf: "{\"kind\": ".utf8)
            JSONWriter.appendQuoted(identity.kind.name, to: &head)
            head.append(contentsOf: ", \"place\": ".utf8)
            JSONWriter.appendQuoted(identity.place, to: &head)
            head.append(contentsOf: ", \"shown\": ".utf8)
            JSONWriter.appendQuoted(identity.shown, to: &head)
            head.append(0x7D)
        }
        head.append(contentsOf: "{\n  \"schemaVersion\": \(Self.schemaVersion),\n  \"local\": ".utf8)
        side(local)
        head.append(contentsOf: ",\n  \"remote\": ".utf8)
        side(remote)
        head.append(contentsOf: ",\n  \"memos\": [".utf8)
        var data = Data(count: head.count + memos.count * 300 + 16)
        let written = data.withUnsafeMutableBytes { raw in
            var out = ByteWriter(buffer: raw.bindMemory(to: UInt8.self))
            out.put(head)
            func token(_ print: Fingerprint?) {
                guard let print else { return out.put("null") }
                out.put(0x22)
                out.decimal(print.modifiedTime.seconds)
                out.put(0x2E)
                var nanoseconds = Int(print.modifiedTime.nanoseconds)
                for position in stride(from: out.count + 8, through: out.count, by: -1) {
                    out.buffer[position] = 0x30 + UInt8(nanoseconds % 10)
                    nanoseconds /= 10
                }
                out.count += 9
                out.put(0x2D)
                out.put(0x30 + (print.archived ? 1 : 0) + (print.deleted ? 2 : 0))
                out.put("-_-")
                if let tag = print.changeTag { out.hex(tag) } else { out.put(0x5F) }
                out.put(0x2D)
                if let digest = print.digest { out.hex(digest) } else { out.put(0x5F) }
                out.put(0x22)
            }
            // Most memos share a time (the run that saw them agree): its text is made once.
            var lastTime: (Timestamp, [UInt8])?
            for index in memos.keys.indices {
                let entry = memos.values[index]
                out.put(index == 0 ? "\n    {\"id\": \"" : ",\n    {\"id\": \"")
                memos.keys[index].write(into: UnsafeMutableBufferPointer(rebasing: out.buffer[out.count...]), capitals: false)
                out.count += 36
                out.put("\", \"agreedAt\": \"")
                if lastTime?.0 != entry.time { lastTime = (entry.time, Array(entry.time.iso8601.utf8)) }
                out.put(lastTime!.1)
                out.put("\", \"state\": \"")
                out.put(entry.state)
                out.put("\", \"local\": ")
                token(entry.local)
                out.put(", \"remote\": ")
                token(entry.remote)
                out.put(0x7D)
            }
            out.put(memos.isEmpty ? "]\n}\n" : "\n  ]\n}\n")
            return out.count
        }
        data.count = written
        return data
    }

    /// The agreement with the entries of `changed` set (a value) or removed (nil).
    package func updating(_ changed: [MemoID: Entry?]) -> Agreement {
        var merged: [MemoID: Entry] = [:]
        merged.reserveCapacity(memos.count + changed.count)
        for (id, entry) in memos.pairs { merged[id] = entry }
        for (id, entry) in changed { merged[id] = entry }
        let ids = merged.keys.sorted()
        var result = self
        result.memos = IDMap(sortedKeys: ids, values: ids.map { merged[$0]! })
        return result
    }
}

/// Reads the memo lines of an agreement file, as `Agreement.data` writes
/// them, with no allocation per line; nil (or false) at the first byte that is not so.
private struct AgreementScanner {
    let bytes: UnsafeRawBufferPointer
    var position: Int
    var lastTime: (text: UnsafeRawBufferPointer, time: Timestamp)?

    mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count, memcmp(bytes.baseAddress! + position, text.utf8Start, count) == 0 else { return false }
        position += count
        return true
    }

    /// The next memo's line, after the list's `[` (`first`) or the last line's `,`.
    mutating func memo(first: Bool) -> (MemoID, Agreement.Entry)? {
        let start = position
        guard literal(first ? "\n    {\"id\": \"" : ",\n    {\"id\": \""), position + 36 <= bytes.count,
            let id = MemoID(utf8: UnsafeRawBufferPointer(rebasing: bytes[position..<position + 36]))
        else {
            position = start
            return nil
        }
        position += 36
        guard literal("\", \"agreedAt\": \""), let end = bytes[position...].firstIndex(of: 0x22) else { return nil }
        // Most lines share a time (the run that saw them agree): it is parsed again only when its text differs.
        let text = UnsafeRawBufferPointer(rebasing: bytes[position..<end])
        if lastTime?.text.elementsEqual(text) != true {
            guard let time = Timestamp(iso8601Bytes: text) else { return nil }
            lastTime = (text, time)
        }
        let time = lastTime!.time
        position = end
        guard literal("\", \"state\": \""), let stateEnd = bytes[position...].firstIndex(of: 0x22) else { return nil }
        position = stateEnd
        guard literal("\", \"local\": "), let local = token(), literal(", \"remote\": "), let remote = token(), literal("}"),
            local != nil || remote != nil
        else { return nil }
        return (id, Agreement.Entry(local: local, remote: remote, time: time))
    }

    /// The end of the list and of the file.
    mutating func end(empty: Bool) -> Bool {
        literal(empty ? "]\n}\n" : "\n  ]\n}\n") && position == bytes.count
    }

    /// A fingerprint in quotes (`seconds.nanoseconds-state-_-tag-digest`), or `null` (.some(nil)); nil when neither.
    mutating func token() -> Fingerprint?? {
        if literal("null") { return .some(nil) }
        guard literal("\""), let seconds = decimal(), literal("."), let nanoseconds = digits(9), literal("-"), position < bytes.count,
            (0x30...0x33).contains(bytes[position])
        else { return nil }
        let state = bytes[position] - 0x30
        position += 1
        guard literal("-_-"), let tag = hex(), literal("-"), let digest = hex(), literal("\"") else { return nil }
        return .some(
            Fingerprint(
                modifiedTime: Timestamp(seconds: seconds, nanoseconds: Int32(nanoseconds)), archived: state & 1 == 1, deleted: state & 2 == 2,
                rowVersion: nil, changeTag: tag, digest: digest))
    }

    mutating func decimal() -> Int64? {
        let negative = literal("-")
        let start = position
        var value: Int64 = 0
        while position < bytes.count, position - start < 18, (0x30...0x39).contains(bytes[position]) {
            value = value * 10 + Int64(bytes[position] - 0x30)
            position += 1
        }
        return position > start ? (negative ? -value : value) : nil
    }

    mutating func digits(_ count: Int) -> Int64? {
        guard position + count <= bytes.count else { return nil }
        var value: Int64 = 0
        for byte in bytes[position..<position + count] {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        position += count
        return value
    }

    /// 16 hex digits in small letters (.some), `_` for none (.some(nil)); nil when neither.
    mutating func hex() -> UInt64?? {
        if literal("_") { return .some(nil) }
        guard position + 16 <= bytes.count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[position..<position + 16] {
            let digit = byte &- 0x30
            let letter = byte &- 0x61
            guard digit < 10 || letter < 6 else { return nil }
            value = value << 4 | UInt64(digit < 10 ? digit : letter &+ 10)
        }
        position += 16
        return .some(value)
    }
}

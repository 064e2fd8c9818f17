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
        package var state: String {
            guard let live = [local, remote].compactMap({ $0 }).first(where: \.isLive) else { return "deleted" }
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
    package static func parse(_ data: Data) throws(StateFileError) -> Agreement {
        guard case .object(let top)? = try? JSONValue.parse(data) else { throw StateFileError(message: "it is not a JSON object") }
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
        let local = try side("local")
        let remote = try side("remote")
        guard case .array(let items)? = top["memos"] else { throw StateFileError(message: "it has no \"memos\" list") }
        var ids: [MemoID] = []
        var entries: [Entry] = []
        ids.reserveCapacity(items.count)
        entries.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            func print(_ value: JSONValue?) -> Fingerprint?? {
                switch value {
                case .null?: .some(nil)
                case .string(let token)?: Fingerprint(token: token).map { .some($0) }
                default: nil
                }
            }
            guard case .object(let memo) = item, case .string(let text)? = memo["id"], let id = MemoID(text),
                ids.last.map({ $0 < id }) ?? true, case .string(let agreed)? = memo["agreedAt"], let time = Timestamp(iso8601: agreed),
                let l = print(memo["local"]), let r = print(memo["remote"]), l != nil || r != nil
            else {
                throw StateFileError(message: "memos[\(index)] is not a memo's agreement in id order")
            }
            ids.append(id)
            entries.append(Entry(local: l, remote: r, time: time))
        }
        return Agreement(local: local, remote: remote, memos: IDMap(sortedKeys: ids, values: entries))
    }

    /// The file's bytes: one line per memo, sorted by id.
    package var data: Data {
        func side(_ identity: SideIdentity) -> String {
            var out: [UInt8] = []
            out += Array("{\"kind\": ".utf8)
            JSONWriter.appendQuoted(identity.kind.name, to: &out)
            out += Array(", \"place\": ".utf8)
            JSONWriter.appendQuoted(identity.place, to: &out)
            out += Array(", \"shown\": ".utf8)
            JSONWriter.appendQuoted(identity.shown, to: &out)
            out.append(0x7D)
            return String(decoding: out, as: UTF8.self)
        }
        var text = "{\n  \"schemaVersion\": \(Self.schemaVersion),\n  \"local\": \(side(local)),\n  \"remote\": \(side(remote)),\n  \"memos\": ["
        text.reserveCapacity(text.utf8.count + memos.count * 200)
        for (index, (id, entry)) in memos.pairs.enumerated() {
            text += index == 0 ? "\n" : ",\n"
            text += "    {\"id\": \"\(id.value)\", \"agreedAt\": \"\(entry.time.iso8601)\", \"state\": \"\(entry.state)\", "
            text += "\"local\": \(entry.local.map { "\"\($0.token)\"" } ?? "null"), "
            text += "\"remote\": \(entry.remote.map { "\"\($0.token)\"" } ?? "null")}"
        }
        text += memos.isEmpty ? "]\n}\n" : "\n  ]\n}\n"
        return Data(text.utf8)
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

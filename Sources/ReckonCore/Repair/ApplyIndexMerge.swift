import Foundation

/// Each side's index.json after the run's actions: read again, the done
/// actions' entries merged in, and written only over the index that was
/// read; an action whose entry cannot follow its file is put back.
extension Execution {
    /// Re-reads the side's index.json, merges the done actions' entries into
    /// it, and writes it, only over the index it read: when another writer
    /// saved the index in between, it is read and merged again (3 tries).
    mutating func mergeIndex(_ role: SideRole) {
        for _ in 0..<3 {
            guard let changedMeanwhile = mergeIndexOnce(role), changedMeanwhile else { return }
        }
        failIndex(role, .keptChanging)
    }

    /// One merge; true when index.json changed between its read and its write (nothing written), nil when done or failed.
    mutating func mergeIndexOnce(_ role: SideRole) -> Bool? {
        let writer = writers[role]!
        let side = plan.side(role)
        let file: FileRead?
        var entries: [MemoID: IndexEntry] = [:]
        do {
            file = try writer.reader.read(["index.json"])["index.json"] ?? nil
        } catch {
            failIndex(role, .unreadableAgain(error: "\(error)"))
            return nil
        }
        guard let file else {
            failIndex(role, .gone)
            return nil
        }
        do {
            entries = try IndexReader.read(file.data).firstEntries
        } catch {
            failIndex(role, .unreadableNow(error: error.message))
            return nil
        }
        let (changing, appending) = entryEdits(role, merging: &entries)
        guard !changing.isEmpty || !appending.isEmpty else { return nil }
        let merged: Data
        do {
            merged = try JSONEdit.index(file.data, changing: changing, appending: appending)
        } catch {
            failIndex(role, .notEditable(error: "\(error)"))
            return nil
        }
        let backup: String
        do {
            backup = try journal.backUp(file.data, side: side.name, path: "index.json")
        } catch {
            failIndex(role, .backupFailed(error: "\(error)"))
            return nil
        }
        let intent = journal.record([
            "event": .string("write"), "side": .string(role.rawValue), "path": .string("index.json"),
            "before": .string(file.tag.sha256), "after": .string(SHA256.hex(of: merged)), "backup": .string(backup)
        ])
        guard intent else {
            failIndex(role, .journal)
            return nil
        }
        do {
            try writer.write(merged, to: "index.json", expecting: file.tag.sha256)
        } catch {
            if error.changedSince {
                journal.record(["event": .string("not-written"), "side": .string(role.rawValue), "path": .string("index.json")])
                return true
            }
            failIndex(role, .writeFailed(error: "\(error)"))
            return nil
        }
        journal.record(["event": .string("wrote"), "side": .string(role.rawValue), "path": .string("index.json")])
        return nil
    }

    /// The edits that merge the done actions' entries into the side's
    /// `entries` (which take the added ones): fields to change in existing
    /// entries, and entries to append. An action whose entry changed since
    /// the plan is put back and counted as changed instead.
    mutating func entryEdits(
        _ role: SideRole, merging entries: inout [MemoID: IndexEntry]
    ) -> (changing: [MemoID: [(key: String, value: JSONValue)]], appending: [Data]) {
        let side = plan.side(role)
        var changing: [MemoID: [(key: String, value: JSONValue)]] = [:]
        var appending: [Data] = []
        for (place, change) in queued[role]! where [.applied, .alreadyDone].contains(results[place].outcome) {
            let id = MemoID(change.id)!
            let entry = entries[id]
            if change.after.matches(entry) { continue }
            guard change.before.map({ $0.matches(entry) }) ?? (entry == nil) else {
                results[place].outcome = .changedSince
                results[place].tell(.entryChangedWhileWriting(id: change.id, side: side.label, failures: putBackFiles(written[place] ?? [])))
                continue
            }
            func time(_ t: Timestamp?) -> JSONValue { t.map { .string($0.iso8601) } ?? .null }
            var fields: [(key: String, value: JSONValue)] = [
                ("modifiedTime", time(change.after.modifiedTime)), ("archivedAt", time(change.after.archivedAt)),
                ("deletedAt", time(change.after.deletedAt))
            ]
            if let tag = change.after.changeTag { fields.append(("changeTag", .string(tag))) }
            if entry == nil {
                var object: [String: JSONValue] = ["id": .string(change.id)]
                for (key, value) in fields { object[key] = value }
                appending.append(JSONWriter.data(.object(object), pretty: false))
                entries[id] = IndexEntry(
                    id: id, spelling: change.id, modifiedTime: change.after.modifiedTime, archivedAt: change.after.archivedAt,
                    deletedAt: change.after.deletedAt, changeTag: change.after.changeTag)
            } else {
                changing[id] = fields
            }
        }
        return (changing, appending)
    }

    /// The side's index.json cannot take the done actions' entries: their memo files are put back.
    mutating func failIndex(_ role: SideRole, _ why: ApplyDetail.IndexTrouble) {
        for (place, _) in queued[role]! where results[place].outcome == .applied {
            results[place].outcome = .failed
            results[place].tell(.indexFailed(why, side: label(role), failures: putBackFiles(written[place] ?? [])))
        }
    }
}

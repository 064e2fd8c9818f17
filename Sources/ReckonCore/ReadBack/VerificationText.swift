import Foundation

extension ExportVerification {
    /// Where a checked file is, as a path inside the export.
    func shownPath(_ file: FileCheck) -> String {
        file.place == .zip && !isZip ? Exporter.zipName + "/" + file.path : file.path
    }

    /// What `verify` prints: a line for each file or memo that is not as
    /// the manifest says, then a sentence on the whole export.
    package func text(shown: String) -> String {
        var lines: [String] = []
        var beside = 0
        var inZip = 0
        // By index: a check is read in place, not copied, and there is one for every file.
        for index in files.indices {
            let place = files[index].place
            if place == .folder && files[index].path != Exporter.manifestName { beside += 1 }
            if place == .zip && !(isZip && files[index].path == Exporter.manifestName) { inZip += 1 }
            guard files[index].status != .ok else { continue }
            lines.append(
                "\(files[index].status.rawValue)  \(escapedForDisplay(shownPath(files[index]))): \(escapedForDisplay(files[index].problem ?? ""))")
        }
        for problem in problems {
            lines.append("damaged  \(escapedForDisplay(problem.path.isEmpty ? shown : problem.path)): \(escapedForDisplay(problem.message))")
        }
        let placeWords =
            isZip
            ? "\(counted(inZip, "entry", "entries")) of the zip \(inZip == 1 ? "matches" : "match") its manifest.json"
            : "\(counted(beside, "file")) beside manifest.json" + (inZip > 0 ? " and \(counted(inZip, "entry", "entries")) of memos.zip" : "")
                + (beside == 1 && inZip == 0 ? " matches it" : " match it")
        if damaged {
            let bad = files.count { $0.status != .ok }
            var parts = ["\(bad) of \(files.count) files differ from manifest.json"]
            // A problem named on the zip itself is the zip's (its structure, libarchive's failure); the rest are the memos'.
            let ofZip = problems.count { $0.path == (isZip ? "" : Exporter.zipName) }
            for (count, what) in [(ofZip, "the zip"), (problems.count - ofZip, "the memos")] where count > 0 {
                parts.append("\(counted(count, "problem")) with \(what)")
            }
            lines.append("\(escapedForDisplay(shown)): DAMAGED: \(parts.joined(separator: ", and ")).")
        } else {
            let counts = manifestCounts ?? MemoCounts()
            var held: [String] = []
            if memosJSONCounts != nil { held.append("memos.json") }
            if markdownCounts != nil { held.append("markdown/") }
            lines.append(
                "\(escapedForDisplay(shown)): whole. The \(placeWords), size and SHA-256; "
                    + "\(counts.inWords) in \(held.isEmpty ? "none of its files" : held.joined(separator: " and ")), as manifest.json counts.")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// What `verify --json` prints (schema version 1, on <doc:Formats#verify-json-and-diff-json>).
    package func json(shown: String, against: (side: String, changes: [ExportChange])?) -> JSONValue {
        func counts(_ value: MemoCounts?) -> JSONValue {
            value.map { .object(["active": .integer($0.active), "archived": .integer($0.archived)]) } ?? .null
        }
        let status = damaged ? "damaged" : against.map { $0.changes.isEmpty } == false ? "moved-on" : "whole"
        return .object([
            "schemaVersion": .integer(1),
            "export": .string(shown),
            "kind": .string(isZip ? "zip" : "folder"),
            "status": .string(status),
            "files": .array(
                files.map { file in
                    .object([
                        "in": .string(file.place.rawValue), "path": .string(file.path), "status": .string(file.status.rawValue),
                        "size": file.size.map(JSONValue.integer) ?? .null, "sha256": file.sha256.map(JSONValue.string) ?? .null,
                        "problem": file.problem.map(JSONValue.string) ?? .null
                    ])
                }),
            "problems": .array(problems.map { .object(["path": .string($0.path), "message": .string($0.message)]) }),
            "counts": .object(["manifest": counts(manifestCounts), "memosJSON": counts(memosJSONCounts), "markdown": counts(markdownCounts)]),
            "against": against.map { .object(["side": .string($0.side), "changes": .array($0.changes.map(\.json))]) } ?? .null
        ])
    }
}

extension ExportChange {
    /// The lines `diff` and `verify --against` print: the change in words,
    /// padded to one width, the id and the title.
    package static func lines(_ changes: [ExportChange]) -> String {
        let width = changes.map(\.words.count).max() ?? 0
        return changes.map { change in
            let words = change.words.padding(toLength: width, withPad: " ", startingAt: 0)
            return "\(words)  \(change.id)" + (change.title.map { "  \(escapedForDisplay(quoted($0)))" } ?? "") + "\n"
        }.joined()
    }

    /// `1 added, 0 removed, 2 edited, 0 archived, 0 unarchived`.
    package static func totalsText(_ changes: [ExportChange]) -> String {
        ExportDiff.totals(changes).map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", ")
    }
}

import Foundation

/// The newest report.json among some folders, read only for the ids of
/// the memos that differ in it: what the shell completions offer for
/// `--take`. Only a memo id, in its own spelling, is ever given back, so a
/// damaged report's text never reaches the shell.
package enum LatestReport {
    /// The ids of the `*`, `-` and `+` memos, each once, in the newest
    /// report.json in `folders`, or, when none is named, in `fallback` and the
    /// folders up to three below it; none when there is none, or it cannot be read.
    package static func differingIDs(in folders: [URL], fallback: URL) -> [String] {
        var reports = folders.map { $0.appendingPathComponent("report.json") }
        if reports.isEmpty { reports = reportFiles(under: fallback, depth: 3) }
        let newest = reports.compactMap { url -> (Date, URL)? in
            guard let date = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date else { return nil }
            return (date, url)
        }.max { $0.0 < $1.0 }
        guard let url = newest?.1, let data = try? readRegularFile(atPath: url.path, limit: 1 << 28),
            case .object(let report)? = try? JSONValue.parse(data), case .array(let differences)? = report["differences"]
        else { return [] }
        var ids: [String] = []
        for case .object(let difference) in differences {
            guard case .string(let sigil)? = difference["sigil"], ["*", "-", "+"].contains(sigil), case .string(let text)? = difference["id"],
                let id = MemoID(text)?.description, !ids.contains(id)
            else { continue }
            ids.append(id)
        }
        return ids
    }

    /// Every `report.json` in `folder` and the folders below it, `depth` deep, hidden ones left out.
    static func reportFiles(under folder: URL, depth: Int) -> [URL] {
        var found: [URL] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names.sorted() where !name.hasPrefix(".") {
            let url = folder.appendingPathComponent(name)
            switch FileKind(path: url.path) {
            case .regular where name == "report.json": found.append(url)
            case .directory where depth > 0: found += reportFiles(under: url, depth: depth - 1)
            default: break
            }
        }
        return found
    }
}

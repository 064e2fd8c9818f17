import Foundation

/// `history.jsonl` in a report folder: one line per pipeline run, so a
/// person sees drift appear and go away.
public enum History {
    public static let fileName = "history.jsonl"
    /// How many runs the report draws.
    public static let shown = 30

    /// Appends one line, keeping every earlier byte (lines it cannot read
    /// included), and returns the last runs, oldest first. A history that
    /// is there but cannot be read is left as it is, never replaced.
    public static func append(_ entry: HistoryEntry, in dir: URL) throws -> [HistoryEntry] {
        let url = dir.appendingPathComponent(fileName)
        var data = Data()
        if FileKind(path: url.path) != .missing {
            do {
                data = try readRegularFile(atPath: url.path, limit: 1 << 30)
            } catch {
                throw OutputError(path: url.path, reason: "the history there \(error.message), so it is left as it is")
            }
        }
        if let last = data.last, last != 0x0A { data.append(0x0A) }
        data.append(JSONWriter.data(try JSONValue(encoding: entry), pretty: false))
        data.append(0x0A)
        try AtomicFile.write(data, to: url)
        return Array(read(data).suffix(shown))
    }

    /// The runs that can be read from the file's bytes, in order.
    static func read(_ data: Data) -> [HistoryEntry] {
        let decoder = JSONDecoder()
        return data.split(separator: 0x0A).compactMap { try? decoder.decode(HistoryEntry.self, from: Data($0)) }
    }
}

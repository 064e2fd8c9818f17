import Foundation

/// `history.jsonl` in a report folder: one line per pipeline run, so a
/// person sees drift appear and go away.
package enum History {
    package static let fileName = "history.jsonl"
    /// How many runs the report draws.
    package static let shown = 30

    /// The history's bytes as they are (none when there is no history yet).
    /// A history that is there but cannot be read is an error, so that it
    /// is left as it is, never replaced.
    package static func existing(in dir: URL) throws(OutputError) -> Data {
        let url = dir.appendingPathComponent(fileName)
        guard FileKind(path: url.path) != .missing else { return Data() }
        do {
            return try readRegularFile(atPath: url.path, limit: 1 << 30)
        } catch {
            throw OutputError(path: url.path, reason: "the history there \(error.message), so it is left as it is")
        }
    }

    /// Writes `existing` with one line more, keeping every earlier byte
    /// (lines it cannot read included).
    package static func append(_ entry: HistoryEntry, to existing: Data, in dir: URL) throws {
        var data = existing
        if let last = data.last, last != 0x0A { data.append(0x0A) }
        data.append(JSONWriter.data(try JSONValue(encoding: entry), pretty: false))
        data.append(0x0A)
        try AtomicFile.write(data, to: dir.appendingPathComponent(fileName))
    }

    /// The last runs the chart draws, oldest first: those `existing` holds, then `entry`.
    package static func shownRuns(_ existing: Data, then entry: HistoryEntry) -> [HistoryEntry] {
        Array((read(existing) + [entry]).suffix(shown))
    }

    /// The runs that can be read from the file's bytes, in order.
    static func read(_ data: Data) -> [HistoryEntry] {
        let decoder = JSONDecoder()
        return data.split(separator: 0x0A).compactMap { try? decoder.decode(HistoryEntry.self, from: Data($0)) }
    }
}

/// One line of `history.jsonl`: a run's time, counts per side, number of
/// differences and exit code.
package struct HistoryEntry: Sendable, Equatable, Codable {
    package struct Side: Sendable, Equatable, Codable {
        package var name: String
        package var label: String
        /// Null when the side failed, as in `report.json`.
        package var counts: MemoCounts?

        package func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(label, forKey: .label)
            try container.encode(counts, forKey: .counts)
        }
    }

    package var time: Timestamp
    package var sides: [Side]
    package var differences: Int
    package var exitCode: Int32
}

import Foundation

extension Pipeline {
    /// Copies every unusable file aside before anything goes on without it.
    package static var quarantining: Stage<LoadedSides, LoadedSides> {
        Stage("quarantine") { loaded, run in
            guard run.settings.writeFiles, let dir = run.definition.quarantineDir, let path = run.definition.quarantinePath else { return loaded }
            let quarantine = Quarantine(dir: dir, path: path, run: ExportFolder.runName(run.settings.startedAt))
            let (sides, records) = quarantine.setAside(loaded.sides)
            for record in records { run.context.note("set aside \(record.source) as \(record.copy)") }
            var result = loaded
            result.local = sides[0]
            result.remotes = Array(sides.dropFirst())
            result.quarantined = records
            return result
        }
    }
}

/// Sets aside every file a store judged damaged: writes the bytes it read to
/// `<dir>/<run>/<side>/<path inside the side>`, checks the copy's size and
/// SHA-256 against them, and only then lets the run go on without it. The
/// source is never opened again, let alone moved, changed or deleted; when
/// the copy cannot be made, the problem says why.
package struct Quarantine {
    /// The quarantine folder and how the user spelled it.
    package var dir: URL
    package var path: String
    /// This run's folder name inside it (its UTC start time).
    package var run: String

    package init(dir: URL, path: String, run: String) {
        self.dir = dir
        self.path = path
        self.run = run
    }

    /// Copies the damaged files of every side; returns the sides with a
    /// problem added for each copy that failed, and a record for each copy made.
    package func setAside(_ sides: [SideListing]) -> ([SideListing], [QuarantineRecord]) {
        var records: [QuarantineRecord] = []
        var result = sides
        for index in result.indices {
            let side = result[index]
            for damaged in side.damaged {
                let problem = side.problems.first { $0.path == damaged.path && $0.severity == .error }
                let inside = "\(run)/\(side.spec.name)/\(damaged.path)"
                do {
                    let sha256 = try copy(damaged.bytes, to: dir.appendingPathComponent(inside))
                    records.append(
                        QuarantineRecord(
                            side: side.spec.name, source: joinPath(side.spec.path, damaged.path),
                            copy: "\(side.spec.name)/\(damaged.path)", sha256: sha256, reason: problem?.message ?? "damaged",
                            folder: dir.appendingPathComponent(run)))
                } catch {
                    result[index].problems.append(
                        Problem(
                            .quarantineFailed, path: damaged.path, id: problem?.id,
                            "could not be copied aside (\(errorWords(error))); the original is untouched"))
                }
            }
        }
        if !records.isEmpty {
            do {
                let data =
                    JSONValue.object([
                        "schemaVersion": .integer(1), "generator": .string("reckon"),
                        "files": .array(records.map(Self.manifestEntry))
                    ]).jsonData + [0x0A]
                try AtomicFile.write(data, to: dir.appendingPathComponent(run).appendingPathComponent("manifest.json"))
            } catch {
                // Named on the first side whose files were copied, where the reader looks for them.
                let side = result.firstIndex { side in records.contains { $0.side == side.spec.name } } ?? 0
                result[side].problems.append(
                    Problem(.quarantineFailed, path: "", "the quarantine's manifest could not be written (\(errorWords(error)))"))
            }
        }
        return (result, records)
    }

    /// Writes the bytes and checks the copy; returns the SHA-256 both share.
    func copy(_ data: Data, to destination: URL) throws -> String {
        let sha256 = SHA256.hex(of: data)
        try AtomicFile.write(data, to: destination)
        let copy = try readRegularFile(atPath: destination.path, limit: Int64(data.count))
        guard copy.count == data.count, SHA256.hex(of: copy) == sha256 else {
            throw QuarantineMismatch()
        }
        return sha256
    }

    struct QuarantineMismatch: Error, CustomStringConvertible {
        var description: String { "the copy's size or SHA-256 differs from the original" }
    }

    static func manifestEntry(_ record: QuarantineRecord) -> JSONValue {
        .object([
            "side": .string(record.side), "source": .string(record.source), "copy": .string(record.copy),
            "sha256": .string(record.sha256), "reason": .string(record.reason)
        ])
    }
}

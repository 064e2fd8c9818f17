import Foundation

/// Sets aside every file that could not be used: copies it byte for byte to
/// `<dir>/<run>/<side>/<path inside the folder>`, checks the copy's size and
/// SHA-256, and only then lets the run go on without it. The source is never
/// moved, changed or deleted; when the copy cannot be made, the problem says
/// why and the original stays exactly as it was.
public struct Quarantine {
    /// The quarantine folder and how the user spelled it.
    public var dir: URL
    public var path: String
    /// This run's folder name inside it (its UTC start time).
    public var run: String
    public var folder = MemoFolder()

    /// Problems whose file is copied aside: its bytes were read but are not
    /// a usable index or memo.
    static let kinds: Set<Problem.Kind> = [.corruptIndex, .corruptMemo, .idMismatch]

    public init(dir: URL, path: String, run: String) {
        self.dir = dir
        self.path = path
        self.run = run
    }

    /// Copies the unusable files of every side; returns the sides with a
    /// problem added for each copy that failed, and a record for each copy made.
    public func setAside(_ sides: [SideListing]) -> ([SideListing], [QuarantineRecord]) {
        var records: [QuarantineRecord] = []
        var result = sides
        for index in result.indices where result[index].status != .failed {
            let side = result[index]
            for problem in side.problems where Self.kinds.contains(problem.kind) && !problem.path.isEmpty {
                let inside = "\(run)/\(side.spec.name)/\(problem.path)"
                do {
                    let sha256 = try copy(side.spec.url.appendingPathComponent(problem.path), to: dir.appendingPathComponent(inside))
                    records.append(QuarantineRecord(side: side.spec.name, source: joinPath(side.spec.path, problem.path),
                                                    copy: "\(side.spec.name)/\(problem.path)", sha256: sha256, reason: problem.message,
                                                    folder: dir.appendingPathComponent(run)))
                } catch {
                    result[index].problems.append(Problem(.quarantineFailed, path: problem.path, id: problem.id,
                                                          "could not quarantine \(problem.path): \(error); the original is untouched"))
                }
            }
        }
        if !records.isEmpty {
            do {
                let data = JSONValue.object(["schemaVersion": .integer(1), "generator": .string("reckon"),
                                              "files": .array(records.map(Self.manifestEntry))]).jsonData + [0x0A]
                try AtomicFile.write(data, to: dir.appendingPathComponent(run).appendingPathComponent("manifest.json"))
            } catch {
                result[0].problems.append(Problem(.quarantineFailed, path: "", "could not write the quarantine manifest: \(error)"))
            }
        }
        return (result, records)
    }

    /// Copies one file and checks the copy; returns the SHA-256 both share.
    func copy(_ source: URL, to destination: URL) throws -> String {
        let data = try readRegularFile(atPath: source.path, limit: max(folder.indexSizeLimit, folder.memoSizeLimit))
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
        .object(["side": .string(record.side), "source": .string(record.source), "copy": .string(record.copy),
                 "sha256": .string(record.sha256), "reason": .string(record.reason)])
    }
}

import Foundation

/// A run folder reckon made: its name, the pipeline its manifest names
/// (nil when it names none: a run written before manifests recorded their
/// pipeline), and the manifest's identity when that proves what the
/// manifest holds (nil for one changed less than a second ago, or while it
/// was read).
package struct RunFolder: Sendable, Equatable {
    package var name: String
    package var pipeline: String?
    var manifest: FileIdentity?
}

/// The run folders one run found in an export folder, kept beside them as
/// `.reckon-runs` for the next run: each with the pipeline its manifest
/// names and the manifest's identity. Every `reckon run` asks which
/// pipeline each run folder belongs to, and a 100k export's manifest is
/// 38 MB, so a manifest whose identity is the one recorded is not read
/// again: writing a file always moves its change time, which nothing sets
/// back. Only identities a second old are recorded (`FileIdentity`), and
/// the file is sealed by its SHA-256, so a damaged one is not used at all.
package enum KnownRuns {
    /// The file's name in the runs' folder.
    package static let fileName = ".reckon-runs"
    /// The first bytes of the file: its format, version 1.
    static let magic = Array("reckon-runs 1\n".utf8)

    /// The runs recorded in `dir`, by name; none when there is no record,
    /// or it is damaged, or it is not a regular file.
    static func read(in dir: URL) -> [String: RunFolder] {
        guard let data = try? readRegularFile(atPath: dir.appendingPathComponent(fileName).path, limit: 64 << 20) else { return [:] }
        let bytes = [UInt8](data)
        guard bytes.count >= magic.count + 32, bytes.starts(with: magic) else { return [:] }
        let body = bytes.dropLast(32)
        var seal = RecordReader(bytes.suffix(32))
        guard body.withUnsafeBytes({ SHA256.digest(of: $0) }) == seal.digest() else { return [:] }
        var reader = RecordReader(body.dropFirst(magic.count))
        let count = reader.int()
        guard (0...body.count).contains(count) else { return [:] }
        var runs: [String: RunFolder] = [:]
        for _ in 0..<count {
            let name = reader.text()
            let pipeline = reader.text()
            guard let name, let manifest = reader.identity(), ExportFolder.runOrder(name) != nil else { return [:] }
            runs[name] = RunFolder(name: name, pipeline: pipeline, manifest: manifest)
        }
        return reader.readWhole ? runs : [:]
    }

    /// Records the runs whose manifest's identity proves what it holds,
    /// replacing the record in `dir`.
    static func write(_ runs: [RunFolder], in dir: URL) throws(OutputError) {
        let known = runs.filter { $0.manifest != nil }.sorted { $0.name < $1.name }
        var record = Record()
        record.add(known.count)
        for run in known {
            record.add(run.name)
            record.add(run.pipeline)
            record.add(run.manifest)
        }
        var bytes = magic + record.bytes
        var seal = Record()
        seal.add(bytes.withUnsafeBytes { SHA256.digest(of: $0) })
        bytes += seal.bytes
        try AtomicFile.write(Data(bytes), to: dir.appendingPathComponent(fileName))
    }
}

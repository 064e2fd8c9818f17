import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Rebuilds a memo folder (`index.json` + `memos/<uuid>.json`, schema
/// version 1, ids in small letters) from an export's `memos.json`, beside
/// the manifest or inside `memos.zip`. Every memo comes back with its
/// unknown keys, numbers digit for digit. The folder is built in a staging
/// folder beside `dir`, read back as a memo folder and compared with the
/// export memo by memo, and only then renamed into place: a restore that
/// fails or is killed leaves nothing at a `dir` that did not exist. Into
/// an empty folder that exists, `memos/` then `index.json` are moved.
package enum ExportRestore {
    /// Restores `export` as `dir`, which must be absent or an empty folder;
    /// `shownDir` names it in messages; `process`: the workers and test
    /// checkpoints. Returns the memos restored.
    package static func restore(
        _ export: ExportOnDisk, to dir: URL, shownDir: String, process: ProcessSettings = ProcessSettings()
    ) throws -> MemoCounts {
        let staging: URL
        do {
            staging = try ExportFolder.makeStaging(beside: dir, kind: "restore", checkpoints: process.checkpoints)
        } catch {
            throw shownInTarget(error, shownDir: shownDir)
        }
        let intoExisting = FileKind(path: dir.path) == .directory
        var published = false
        // Opened before anything is written, so that its one syncfs reports every write that failed on its way to
        // the disk since (Linux notes such failures per file system, and tells each descriptor of those after its opening).
        let disk = open(staging.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if disk >= 0 { close(disk) } }
        do {
            guard disk >= 0 else { throw OutputError(path: staging.path, reason: AtomicFile.lastError()) }
            /// Flushes the file system that holds the staging folder, `dir` and the folder they are in.
            func flush() throws(OutputError) {
                guard reckon_syncfs(disk) == 0 else { throw OutputError(path: shownDir, reason: AtomicFile.lastError()) }
            }
            let counts = try write(export, into: staging, shownDir: shownDir, process: process)
            try flush()
            process.checkpoints.at("restore-checked")
            if intoExisting {
                // A folder that exists (empty) keeps its inode, owner and permissions: the two
                // entries move into it, index.json last, and never over anything put there since.
                guard reckon_rename_no_replace(staging.appendingPathComponent("memos").path, dir.appendingPathComponent("memos").path) == 0 else {
                    throw OutputError(path: shownDir + "/memos", reason: AtomicFile.lastError())
                }
                guard reckon_rename_no_replace(staging.appendingPathComponent("index.json").path, dir.appendingPathComponent("index.json").path) == 0
                else {
                    let reason = AtomicFile.lastError()
                    // The memos moved in a moment ago are this restore's own: they go back, so nothing half-restored stays.
                    _ = rename(dir.appendingPathComponent("memos").path, staging.appendingPathComponent("memos").path)
                    throw OutputError(path: shownDir + "/index.json", reason: reason)
                }
                published = true
                try FileTree.remove(staging.path)
            } else {
                guard reckon_rename_no_replace(staging.path, dir.path) == 0 else { throw OutputError(path: shownDir, reason: AtomicFile.lastError()) }
                published = true
            }
            // The renames themselves, on disk before success is told.
            try flush()
            return counts
        } catch {
            // A restore whose last flush failed may not be on disk: what it
            // put at `dir` goes, so the same restore can be run again.
            if published {
                if intoExisting {
                    try? FileTree.remove(dir.appendingPathComponent("memos").path)
                    unlink(dir.appendingPathComponent("index.json").path)
                } else {
                    try? FileTree.remove(dir.path)
                }
            }
            try? FileTree.remove(staging.path)
            throw shownInTarget(error, shownDir: shownDir)
        }
    }

    /// `error`, when it names a file in the staging folder (or the folder
    /// itself), told of the same file in the folder restored into, as the
    /// user named it (`shownDir`): the staging folder is reckon's own, and
    /// gone by the time the message is read.
    private static func shownInTarget(_ error: any Error, shownDir: String) -> any Error {
        guard case (let path?, let reason)? = fileErrorParts(error), let inside = ExportFolder.insideStaging(path) else { return error }
        return OutputError(path: joinPath(shownDir, inside), reason: reason)
    }

    /// Writes the memo folder into `staging` and checks it against the export.
    private static func write(_ export: ExportOnDisk, into staging: URL, shownDir: String, process: ProcessSettings) throws -> MemoCounts {
        let memosFolder = staging.appendingPathComponent("memos")
        try AtomicFile.makeFolder(memosFolder)
        let index = try OutputFile(staging.appendingPathComponent("index.json"))
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("entries")
        writer.beginArray()
        var exported: [MemoID: MemoState] = [:]
        var batch: [Memo] = []
        /// The batch whose memo files are being written on the other cores while the next is read.
        var writing: Pending<[Result<Void, any Error>]>?
        // Nothing may still write into the staging folder once this returns, or it could not be removed.
        defer { _ = writing?.wait() }
        /// Waits for the batch being written, and throws what stopped it.
        func finishWriting() throws {
            guard let done = writing?.wait() else { return }
            writing = nil
            for result in done { try result.get() }
        }
        /// Writes the memo files of `batch` on every core, while the next batch is read, and their index entries in order.
        func writeBatch() throws {
            try finishWriting()
            let memos = batch
            writing = Pending(on: process.threads) {
                mapOnEveryCore(memos, chunkSize: 64, on: process.threads) { chunk in
                    chunk.map { memo in
                        Result { () throws in
                            let file = try OutputFile(memosFolder.appendingPathComponent("\(memo.id.value).json"))
                            try JSONExport.write(memo, depth: 0) { try file.write($0) }
                            try file.write(Data([0x0A]))
                            _ = try file.finish()
                        }
                    }
                }.flatMap { $0 }
            }
            for memo in batch {
                func date(_ time: Timestamp?) -> JSONValue { time.map { .string($0.iso8601) } ?? .null }
                writer.value(
                    .object([
                        "id": .string(memo.id.value), "modifiedTime": date(memo.modifiedAt), "archivedAt": date(memo.archivedAt),
                        "deletedAt": date(memo.deletedAt), "changeTag": memo.changeTag.map(JSONValue.string) ?? .null
                    ]))
            }
            try index.write(writer.take())
            batch.removeAll(keepingCapacity: true)
        }
        let (manifest, facts) = try export.readMemos(on: process.threads) { memo in
            exported[memo.id] = MemoState(MemoSummary(memo))
            batch.append(memo)
            if batch.count == 1024 { try writeBatch() }
        }
        try writeBatch()
        try finishWriting()
        writer.endArray()
        writer.key("schemaVersion")
        writer.value(.integer(MemoIndex.supportedSchemaVersion))
        writer.endObject()
        try index.write(writer.take() + [0x0A])
        _ = try index.finish()
        process.checkpoints.at("restore-written")
        guard facts.counts == manifest.counts else {
            throw ExportReadError(
                path: export.shown,
                reason: "its memos.json holds \(facts.counts.inWords), but manifest.json counts \(manifest.counts.inWords); nothing was restored")
        }
        try checkReadBack(staging, shownDir: shownDir, memoBytes: manifest.memoBytes, against: exported, process: process)
        return facts.counts
    }

    /// Reads the memo folder written in `staging` back as any memo folder
    /// is read, and compares it memo by memo with the export's memos, `exported`.
    private static func checkReadBack(
        _ staging: URL, shownDir: String, memoBytes: Int, against exported: [MemoID: MemoState], process: ProcessSettings
    ) throws {
        let spec = SideSpec(role: .remote, name: "restored", label: "the restored folder", path: shownDir, kind: .folder(staging))
        // A memo file restored is never longer than its entry in memos.json, which the manifest's memoBytes allows.
        var limits = ReadLimits()
        limits.memoSizeLimit = max(limits.memoSizeLimit, Int64(memoBytes))
        let side = spec.store(limits: limits, process: process).load(deep: true)
        if let problem = side.problems.first(where: { $0.severity == .error }) ?? (side.status == .ok ? nil : side.problems.first) {
            throw ExportReadError(
                path: shownDir, reason: "the restored folder does not read back whole (\(problem.path): \(problem.message)); nothing was restored")
        }
        var restored: [MemoID: MemoState] = [:]
        for (id, _) in side.entries.pairs {
            if let summary = side.memos[id] { restored[id] = MemoState(summary) }
        }
        if let change = ExportDiff.changes(from: exported, to: restored).first {
            throw ExportReadError(path: shownDir, reason: "memo \(change.id) reads back \(change.words) from the export; nothing was restored")
        }
    }
}

extension ExportRestore {
    /// Why the folder `given` (`dir` by its real path, `shown` as the user
    /// spelled it) cannot be restored into, starting with its name; nil
    /// when it is absent or an empty folder. A link, even one to nothing
    /// yet, is never written through.
    package static func refusal(of dir: URL, given: URL, shown: String) -> String? {
        if FileKind(path: given.path) == .link {
            return "\(shown) is a link; reckon does not write through links, so nothing was written"
        }
        switch FileKind(path: dir.path) {
        case .missing: return nil
        case .directory:
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? ["?"]
            return names.isEmpty ? nil : "\(shown) is not empty; reckon restores only into a new or empty folder, so nothing was written"
        case let other: return "\(shown) is \(other.description), not a folder; nothing was written"
        }
    }

    /// Why `dir` cannot be restored into from `export` (named `exportShown`):
    /// it lies inside the export, which reckon never writes into. A
    /// memos.zip inside an export folder: the folder is the export.
    package static func refusal(of dir: URL, shown: String, from export: ExportOnDisk, exportShown: String) -> String? {
        let folderOfZip = export.url.deletingLastPathComponent()
        let protected = export.isZip && FileKind(path: folderOfZip.appendingPathComponent("manifest.json").path).isRegular ? folderOfZip : export.url
        guard isWithin(dir.path, realPath(protected.path)) else { return nil }
        return "\(shown) is inside the export \(exportShown), which reckon never writes into"
    }
}

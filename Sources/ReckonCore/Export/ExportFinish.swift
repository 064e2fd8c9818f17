import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The end of an export: `memos.json` closed, the manifests written, the zip finished.
extension Exporter.Run {
    /// Finishes the export: closes `memos.json`, writes the manifest (and
    /// with the zip, finishes it and removes what only it needed).
    func finish(_ plan: Plan, _ outputs: Outputs) throws -> ExportSummary {
        var outputs = outputs
        let time = plan.exportedAt ?? ZipEntryRules.earliest
        let jsonFile = try outputs.closeJSON(source: source, time: time)
        outputs.blocks?.close()
        exporter.process.checkpoints.at("memos-written")

        var manifest = ExportManifest(
            source: source, pipeline: exporter.pipeline, exportedAt: plan.exportedAt, includeArchived: includeArchived, formats: formats,
            counts: outputs.counts, files: [], missing: missing.sorted { $0.id < $1.id })
        manifest.memoBytes = max(manifest.memoBytes, outputs.largestEntry)
        if zipped { manifest.zipWriter = ZipBuilder.settings }
        let manifestURL = staging.appendingPathComponent(Exporter.manifestName)
        let folderManifest: (size: Int, digest: SHA256.Digest)
        let zipFile: Written?
        var jsonBlocks: [JSONBlocks.Block] = []
        var copiedJSONBlocks = 0
        if let zipWriter = outputs.zipWriter {
            let finished = try finishZip(zipWriter, manifest: manifest, to: manifestURL, json: outputs.blocks!, outputs.written, time: time)
            let stream = try outputs.blocks!.finished()
            copiedJSONBlocks = stream.copied
            folderManifest = finished.manifest
            zipFile = finished.zip
            // Where each block of memos.json is in the zip, for the next run.
            jsonBlocks = stream.blocks.map { block in
                var block = block
                block.offset += zipWriter.deflatedAt!
                return block
            }
        } else {
            folderManifest = try Exporter.writeManifest(manifest, to: manifestURL) { list, _ in
                let files = try outputs.written.sorted()
                while let file = try files.next() { try list(.folder, file) }
            }
            zipFile = nil
        }
        try Exporter.makeReadOnly(manifestURL)
        try exporter.index?.finish(manifest: folderManifest.digest, zip: zipFile?.digest, jsonBlocks: jsonBlocks)
        exporter.process.checkpoints.at("manifest-written")
        return ExportSummary(
            formats: formats, exportedAt: plan.exportedAt, counts: outputs.counts, missing: manifest.missing,
            json: jsonFile.record, markdownBytes: formats.contains(.markdown) ? outputs.markdownBytes : 0, zip: zipFile?.record,
            reusedMemos: outputs.reusedMemos, copiedZipEntries: outputs.zipWriter?.copied ?? 0,
            copiedJSONBlocks: copiedJSONBlocks, jsonBlocks: jsonBlocks.count)
    }

    /// Writes the folder's manifest (to `manifestURL`) and finishes the
    /// zip: `memos.json` and the zip's own manifest are deflated on the
    /// zip's thread while the folder's manifest is written here. The
    /// zip's manifest lists the zip's other entries and goes last, so a
    /// zip cut short lacks it. Gives the folder manifest's size and
    /// SHA-256, and the zip as the folder's manifest lists it.
    func finishZip(
        _ zipWriter: ZipBuilder, manifest: ExportManifest, to manifestURL: URL, json blocks: JSONBlocks,
        _ written: SpillSort<Written>, time: Timestamp
    ) throws -> (manifest: (size: Int, digest: SHA256.Digest), zip: Written?) {
        let staging = staging
        let formats = formats
        try zipWriter.add([.init(name: Exporter.jsonName, modified: time, contents: .deflated(blocks))])
        let innerURL = staging.appendingPathComponent(".zip-" + Exporter.manifestName)
        let inner = try Exporter.writeManifest(manifest, to: innerURL) { list, _ in
            let files = try written.sorted()
            while let file = try files.next() { try list(.zip, file) }
        }
        try zipWriter.add([.init(name: Exporter.manifestName, modified: time, contents: .file(innerURL, size: inner.size))])
        // What is written so far goes to disk while the last entries are
        // deflated, so the flush before publishing has little more than the zip left.
        // Its failure fails the export: the pages it could not write may
        // be gone, and a later flush on another descriptor is not told.
        let earlyFlush = DispatchGroup()
        let earlyFlushFailure = Mutex<OutputError?>(nil)
        exporter.process.threads.async(group: earlyFlush) {
            do throws(OutputError) { try ExportFolder.flush(staging) } catch { earlyFlushFailure.withLock { $0 = error } }
        }
        defer { earlyFlush.wait() }
        // The container is written on another core while the folder's manifest lists the files;
        // nothing else touches the zip meanwhile, and it is waited for before this returns or throws.
        nonisolated(unsafe) let container = zipWriter
        let zipFinished = Pending(on: exporter.process.threads) { Result { try container.finish() } }
        defer { _ = zipFinished.wait() }
        var zipFile: Written?
        let folderManifest = try Exporter.writeManifest(manifest, to: manifestURL) { list, later in
            let files = try written.sorted()
            while let file = try files.next() {
                // Which files `written` holds stay beside the manifest.
                if formats.contains(file.path == Exporter.jsonName ? .json : .markdown) { try list(.folder, file) }
            }
            try later(.folder) {
                let (size, digest) = try zipFinished.wait().get()
                guard unlink(innerURL.path) == 0 else { throw OutputError(path: innerURL.path, reason: AtomicFile.lastError()) }
                try Exporter.makeReadOnly(staging.appendingPathComponent(Exporter.zipName))
                zipFile = Written(path: Exporter.zipName, size: size, digest: digest, modified: time)
                // Files only the zip needed go now, before the manifest is whole.
                if !formats.contains(.json) {
                    let json = staging.appendingPathComponent(Exporter.jsonName)
                    guard unlink(json.path) == 0 else { throw OutputError(path: json.path, reason: AtomicFile.lastError()) }
                }
                if !formats.contains(.markdown) { try FileTree.remove(staging.appendingPathComponent(Exporter.markdownName).path) }
                exporter.process.checkpoints.at("zip-written")
                return zipFile!
            }
            try list(.zip, Written(path: Exporter.manifestName, size: inner.size, digest: inner.digest, modified: time))
            let entries = try written.sorted()
            while let file = try entries.next() { try list(.zip, file) }
        }
        earlyFlush.wait()
        if let failure = earlyFlushFailure.withLock({ $0 }) { throw failure }
        return (folderManifest, zipFile)
    }
}

import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Pass 2 of an export: each memo read or taken whole, and written.
extension Exporter.Run {
    /// Where pass 2 writes, and what it counts.
    struct Outputs {
        /// `memos.json`, written through `writer`; nil when it is not written.
        let json: OutputFile?
        var writer: JSONWriter
        /// Every file written, for the manifests.
        let written: SpillSort<Written>
        /// The zip, deflated on every core while the memos are read.
        let zipWriter: ZipBuilder?
        /// `memos.json` deflated for the zip as it is written; nil without a zip.
        let blocks: JSONBlocks?
        var counts = MemoCounts()
        var markdownBytes = 0
        /// The most bytes one memo's entry in `memos.json` takes.
        var largestEntry = 0
        /// How many memos were taken whole from the previous run, unread.
        var reusedMemos = 0

        /// Writes `memo`'s entry in `memos.json` and counts it; lists its
        /// Markdown file, when it has one, and gives `index` its record.
        mutating func record(_ memo: Rendered, planned: Planned, markdown: MarkdownFile?, index: MarkdownIndex.Writer?) throws {
            var entryRange = 0..<0
            if let json, memo.streamed {
                // The comma and indent before the entry, then the entry in pieces.
                writer.written(Data())
                try writeJSON(writer.take())
                let start = json.size
                try JSONExport.write(memo.memo!, depth: 2) { try writeJSON($0) }
                entryRange = start..<json.size
                blocks?.memoEnded(id: memo.id)
            } else if let json {
                writer.written(memo.json)
                let bytes = writer.take()
                let start = json.size + bytes.count - memo.json.count
                entryRange = start..<start + memo.json.count
                try writeJSON(bytes)
                blocks?.memoEnded(id: memo.id)
            }
            largestEntry = max(largestEntry, entryRange.count)
            if memo.archived { counts.archived += 1 } else { counts.active += 1 }
            if memo.memo == nil { reusedMemos += 1 }
            if let markdown {
                let file = markdown.written
                try written.append(file)
                try index?.append(
                    .init(
                        createdAt: memo.createdAt, id: memo.id, fingerprint: memo.fingerprint!, path: file.path,
                        digest: file.digest, inode: markdown.inode, modified: memo.modified, archived: memo.archived,
                        json: entryRange, source: planned.source))
                markdownBytes += file.size
            }
        }

        /// Writes the next bytes of `memos.json`, and hands them to the zip's blocks.
        func writeJSON(_ bytes: Data) throws(OutputError) {
            try json!.write(bytes)
            bytes.withUnsafeBytes { blocks?.wrote($0) }
        }

        /// Closes `memos.json`, when it is written, and lists it. Gives
        /// its size and SHA-256 (size 0 and no digest when it is not written).
        mutating func closeJSON(source: ExportManifest.Source, time: Timestamp) throws -> Written {
            var jsonFile = Written(path: Exporter.jsonName, size: 0, digest: SHA256().finalize(), modified: time)
            guard let json else { return jsonFile }
            writer.endArray()
            writer.key("schemaVersion")
            writer.value(.integer(1))
            writer.key("source")
            writer.value(try JSONValue(encoding: source))
            writer.endObject()
            try writeJSON(writer.take() + [0x0A])
            jsonFile.size = json.size
            jsonFile.digest = try json.finish()
            try Exporter.makeReadOnly(json.url)
            try written.append(jsonFile)
            return jsonFile
        }
    }

    /// Pass 2: reads each memo again (or takes it from the previous run)
    /// and writes it everywhere, then lets it go; memos are read and
    /// rendered, and Markdown files written, on every core, `batchSize`
    /// at a time.
    mutating func writeMemos(_ plan: Plan, progress: (Int, Int) -> Void) throws -> Outputs {
        let json = withJSON ? try OutputFile(staging.appendingPathComponent(Exporter.jsonName)) : nil
        if withMarkdown { try AtomicFile.makeFolder(staging.appendingPathComponent(Exporter.markdownName)) }
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("exportedAt")
        writer.string(plan.exportedAt?.iso8601)
        writer.key("memos")
        writer.beginArray()
        let written = SpillSort<Written>(scratch: staging, runLength: exporter.sortRunLength)
        // The zip is written while the memos are read: each batch's Markdown
        // files go to it in export order, deflated on every core; an
        // unchanged memo's entry is copied from the previous run's zip.
        let zipWriter =
            zipped
            ? ZipBuilder(
                url: staging.appendingPathComponent(Exporter.zipName), previous: exporter.previous?.zip, process: exporter.process)
            : nil
        let blocks = zipWriter.map { _ in
            JSONBlocks(
                url: staging.appendingPathComponent(JSONBlocks.fileName), previous: exporter.previous?.jsonBlocks, on: exporter.process.threads)
        }
        let recorder = Recorder(
            Outputs(json: json, writer: writer, written: written, zipWriter: zipWriter, blocks: blocks), index: exporter.index,
            staging: staging, on: exporter.process.threads)
        do {
            let order = try plan.memos.sorted()
            var position = 0
            var batch: [Planned] = []
            // The previous run's records of this batch's memos, read alongside them in export order.
            var reusable: [MemoID: MarkdownIndex.Entry] = [:]
            while let memo = try order.next() {
                if let problem = plan.heldTwice[memo.id] {
                    missing.append(
                        .init(
                            id: memo.id, path: problem.path,
                            reason: "the id is held twice (\(problem.message)), and reckon does not pick one"))
                    continue
                }
                batch.append(memo)
                if let entry = exporter.previous?.entry(createdAt: memo.createdAt, id: memo.id) { reusable[memo.id] = entry }
                if batch.count == exporter.batchSize {
                    progress(position, plan.count)
                    position += batch.count
                    try writeBatch(&batch, reusable: &reusable, into: recorder)
                }
            }
            try writeBatch(&batch, reusable: &reusable, into: recorder)
        } catch {
            // Nothing may still write into the staging folder once the caller has the error.
            _ = try? recorder.finish()
            throw error
        }
        let outputs = try recorder.finish()
        progress(plan.count, plan.count)
        // The index's copy sorted by id is written while the zip is deflated.
        exporter.index?.startWritingByID()
        return outputs
    }

    /// Writes the memos of `batch`, in export order, and empties it and
    /// `reusable` (the previous run's records of them): renders each
    /// (or takes it from the previous run), writes its Markdown file,
    /// and hands the memos to `recorder`.
    mutating func writeBatch(
        _ batch: inout [Planned], reusable: inout [MemoID: MarkdownIndex.Entry], into recorder: Recorder
    ) throws {
        // While the zip's thread is behind, it sets the pace: this
        // batch's work is done here, in one piece, leaving it a core.
        let spread = recorder.zipWriter?.isBehind != true
        let memos = render(batch, reusable: reusable, spread: spread)
        batch.removeAll(keepingCapacity: true)
        let kept = try writeMarkdownFiles(memos, reusable: reusable, spread: spread)
        reusable.removeAll(keepingCapacity: true)
        try recorder.record(kept)
    }

    /// Hands each batch's Markdown files to the zip and records its
    /// memos (`Outputs.record`) on another core, in batch order, while
    /// the next batch is rendered and written here. One batch is
    /// recorded at a time; `outputs` is touched only by it, and by the
    /// caller once `finish` has waited for the last.
    final class Recorder: @unchecked Sendable {
        private var outputs: Outputs
        private let index: MarkdownIndex.Writer?
        private let staging: URL
        /// The threads a batch is recorded on.
        private let workers: Workers
        /// The batch being recorded; only the caller's thread touches it.
        private var inFlight: Pending<Result<Void, any Error>>?
        /// The zip the batches go to, kept apart from `outputs` so the
        /// caller may ask whether it is behind while a batch is recorded.
        let zipWriter: ZipBuilder?

        init(_ outputs: Outputs, index: MarkdownIndex.Writer?, staging: URL, on workers: Workers) {
            self.workers = workers
            self.outputs = outputs
            self.index = index
            self.staging = staging
            zipWriter = outputs.zipWriter
        }

        /// Records `kept` once the batch before it is recorded; throws
        /// what stopped that batch, if something did.
        func record(_ kept: [(Planned, Rendered, MarkdownFile?)]) throws {
            try waitForBatch()
            inFlight = Pending(on: workers) { [self] in Result { try recordNow(kept) } }
        }

        /// The outputs, once every batch is recorded.
        func finish() throws -> Outputs {
            try waitForBatch()
            return outputs
        }

        private func waitForBatch() throws {
            guard let batch = inFlight else { return }
            inFlight = nil
            try batch.wait().get()
        }

        private func recordNow(_ kept: [(Planned, Rendered, MarkdownFile?)]) throws {
            let previousZip = zipWriter?.previous
            try zipWriter?.add(
                kept.compactMap { _, _, file in
                    file.map { file in
                        let copied = file.reused ? file.data.flatMap { previousZip?.entry(named: file.written.path, holding: $0) } : nil
                        return .init(
                            name: file.written.path, modified: file.written.modified,
                            contents: copied.map { .copy($0) } ?? file.data.map { .data($0) }
                                ?? .file(staging.appending(path: file.written.path, directoryHint: .notDirectory), size: file.written.size))
                    }
                })
            for (planned, memo, markdown) in kept {
                try outputs.record(memo, planned: planned, markdown: markdown, index: index)
            }
        }
    }

    /// How many memos one core takes at a time: `chunkSize` when the
    /// work is spread over every core, else all `count` in one piece.
    func pieces(of count: Int, spread: Bool) -> Int { spread ? exporter.chunkSize : max(count, 1) }

    /// Reads `memos` and renders each, on every core.
    mutating func readAndRender(_ memos: [(MemoID, IDSpelling)], spread: Bool) -> [MemoID: Rendered] {
        let withMarkdown = withMarkdown
        let fingerprinted = fingerprinted
        return Dictionary(
            uniqueKeysWithValues: read(
                memos, chunkSize: pieces(of: memos.count, spread: spread), as: .memo,
                then: { Rendered($0, markdown: withMarkdown, fingerprinted: fingerprinted) }
            )
            .map { ($0.0.0, $0.1) })
    }

    /// The memos of a batch, rendered, in its order: the unchanged memos
    /// the previous run holds whole taken from it, the rest read. A memo
    /// that cannot be read is left out.
    mutating func render(_ batch: [Planned], reusable: [MemoID: MarkdownIndex.Entry], spread: Bool) -> [(Planned, Rendered)] {
        let withMarkdown = withMarkdown
        let previousJSON = exporter.previous?.json ?? -1
        let unchanged = batch.compactMap { $0.unchanged ? reusable[$0.id] : nil }
        let taken = Dictionary(
            uniqueKeysWithValues: mapOnEveryCore(unchanged, chunkSize: pieces(of: unchanged.count, spread: spread), on: exporter.process.threads) {
                chunk in
                zip(chunk, MarkdownIndex.Previous.jsonEntries(chunk, in: previousJSON)).compactMap { entry, json in
                    entry.names.flatMap { names in
                        json.map { (entry.id, Rendered(taking: entry, json: $0, names: names, markdown: withMarkdown)) }
                    }
                }
            }.joined())
        let fresh = readAndRender(batch.filter { taken[$0.id] == nil }.map { ($0.id, $0.spelledAs) }, spread: spread)
        return batch.compactMap { plan in taken[plan.id].map { (plan, $0) } ?? fresh[plan.id].map { (plan, $0) } }
    }

    /// Writes the Markdown file of each of `memos` (when it has one) on
    /// every core, reusing the previous run's file where it can. A memo
    /// taken unread whose previous file cannot be reused is read and
    /// rendered after all, and left out when it cannot be read. Gives
    /// the memos kept, each with its file.
    mutating func writeMarkdownFiles(
        _ memos: [(Planned, Rendered)], reusable: [MemoID: MarkdownIndex.Entry], spread: Bool
    ) throws -> [(Planned, Rendered, MarkdownFile?)] {
        var memos = memos
        let previousMarkdown = exporter.previous?.markdown
        // The short name unless an earlier memo took it: an earlier
        // batch's file is found when the name is created, this batch's here.
        var shortNames = Set<String>()
        let named = memos.map { _, memo in
            (memo, shortNames.insert(memo.shortName).inserted, previousMarkdown.flatMap { folder in reusable[memo.id].map { (folder, $0) } })
        }
        var outcomes = writeMarkdown(named, spread: spread)
        // A memo taken unread whose previous file cannot be reused is read and rendered after all.
        let unreusable = outcomes.indices.filter { if case .failure(let error) = outcomes[$0] { error is Rendered.NeedsReading } else { false } }
        if !unreusable.isEmpty {
            let reread = readAndRender(unreusable.map { (memos[$0].0.id, memos[$0].0.spelledAs) }, spread: spread)
            let retried = writeMarkdown(unreusable.compactMap { at in reread[memos[at].1.id].map { ($0, named[at].1, nil) } }, spread: spread)
            var next = retried.makeIterator()
            for at in unreusable {
                if let memo = reread[memos[at].1.id] {
                    memos[at].1 = memo
                    outcomes[at] = next.next()!
                }
            }
        }
        let kept = zip(memos, outcomes).filter { if case .failure(let error) = $0.1 { !(error is Rendered.NeedsReading) } else { true } }
        return try kept.map { memo, outcome in (memo.0, memo.1, try outcome.get()) }
    }

    /// Writes each memo's Markdown file on every core: the previous
    /// run's file where it can (`previous`), else rendered. A chunk's
    /// previous files are read and hashed first, then put in place by one
    /// core at a time: ext4 adds names to a folder one at a time, and a
    /// core waiting for that in the kernel spins, where it could read
    /// the next chunk. Each link is checked after, outside that turn.
    func writeMarkdown(_ named: [(Rendered, Bool, (OpenFolder, MarkdownIndex.Entry)?)], spread: Bool) -> [Result<MarkdownFile?, any Error>] {
        let stagingPath = staging.path
        let placing = placingLock
        let linkingInto = exporter.linksReusedFiles ? OpenFolder(stagingPath + "/" + Exporter.markdownName) : nil
        let checkpoints = exporter.process.checkpoints
        return Array(
            mapOnEveryCore(named, chunkSize: pieces(of: named.count, spread: spread), on: exporter.process.threads) { chunk in
                let read = chunk.map { memo, mayTakeShortName, previous in
                    previous.flatMap { memo.readPrevious($0.1, from: $0.0, into: stagingPath, mayTakeShortName: mayTakeShortName) }
                }
                let placed = placing.withLock {
                    zip(chunk, read).map { named, read in
                        read.map { read in Result { try named.0.place(read, linkingInto: linkingInto) } }
                    }
                }
                return zip(chunk, zip(read, placed)).map { named, readAndPlaced in
                    let outcome: Result<MarkdownFile?, any Error>
                    switch readAndPlaced {
                    case (let read?, .success(let placed?)?) where !placed.linked || named.0.holdsLinked(read, in: linkingInto!):
                        outcome = .success(placed.file)
                    case (_, .failure(let error)?):
                        outcome = .failure(error)
                    default:
                        outcome = Result { try named.0.writeMarkdown(into: stagingPath, mayTakeShortName: named.1) }
                    }
                    if case .success(.some) = outcome { checkpoints.at("markdown-file-written") }
                    return outcome
                }
            }.joined())
    }
}

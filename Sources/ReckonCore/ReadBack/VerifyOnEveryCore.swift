import Foundation
import Synchronization

extension ExportVerifier {
    /// What reading every entry of a zip gave, in the zip's order: what
    /// `verifyZip` goes on with.
    struct ZipPass {
        var seen: [String: (size: Int, sha256: String)] = [:]
        var order: [String] = []
        var manifestData: Data?
        /// The zip's own manifest as read (with no folder manifest), parsed once.
        var manifest: Result<ExportManifest, ExportReadError>?
        var markdown: [MarkdownFile] = []
        var streamed: [StreamedEntry] = []
        var json: MemosJSONReader.Facts?
    }

    /// A zip's own manifest as read and parsed, and where it lies.
    struct ManifestRead: Sendable {
        var placed: PlacedEntry
        var data: Data
        var sha256: String
        var manifest: Result<ExportManifest, ExportReadError>
    }

    /// Reads and parses the manifest that lies at `placed` in `file`
    /// (shown as `shown`); nil when it is not whole.
    static func readManifest(_ placed: PlacedEntry, of file: ZipFile, shown: String) -> ManifestRead? {
        var data = Data()
        guard (try? EntryInflater().read(placed, of: file) { data.append(contentsOf: $0) }) == true else { return nil }
        let manifest = Result { () throws(ExportReadError) in try ExportManifest.read(data, shown: shown) }
        return ManifestRead(placed: placed, data: data, sha256: SHA256.hex(of: data), manifest: manifest)
    }

    /// Reads the zip's own manifest from where the last record of that name
    /// in its central directory (`listing`) puts it, while the directory
    /// is checked; nil when it cannot be read so. What is read is used
    /// only when the check puts the manifest at the same place.
    static func readManifestAhead(in listing: CentralDirectoryListing, shown: String) -> ManifestRead? {
        let name = Array(Exporter.manifestName.utf8)
        guard let last = listing.records.last(where: { $0.name == name }) else { return nil }
        do throws(ZipStructureError) {
            let wide = try last.wide()
            // One that says it is larger than a manifest may be on disk is left to the check, and to libarchive.
            guard wide.uncompressedSize <= 1 << 30 else { return nil }
            let header = try LocalHeader.read(at: wide.localHeaderOffset, before: listing.end.offset, in: listing.file)
            let placed = PlacedEntry(
                dataOffset: header.dataOffset, compressedSize: wide.compressedSize, size: wide.uncompressedSize, crc32: last.crc32,
                method: last.method)
            return readManifest(placed, of: listing.file, shown: shown)
        } catch {
            return nil
        }
    }

    /// What one entry gave.
    private struct EntryRead: Sendable {
        var index: Int
        var size: Int
        var sha256: String
        var markdown: MarkdownFile?
    }

    /// Reads every entry of the zip at `url` on every core, from the
    /// places its central directory (`central`, already checked) gives:
    /// each entry inflated, hashed and checked against its CRC-32 and size,
    /// `memos.json` read as memos (when `readJSON`), the Markdown files'
    /// front matter (when `readMarkdown`), the manifest kept (with no
    /// `folderManifest`). The large entries start first, each on its own,
    /// the others go in runs of entries that follow one another, and what
    /// each gave is put back in the zip's order, so the outcome is the
    /// same on any number of threads.
    ///
    /// Nil when the zip is anything but what reckon writes, whole: the
    /// central directory disagrees with the entries, an entry is damaged,
    /// held twice, not a regular file, encrypted or compressed otherwise,
    /// or its name is not UTF-8. Then libarchive reads it again, in order,
    /// and its words say what is wrong, as they always did.
    func readOnEveryCore(
        _ url: URL, central: CentralDirectoryCheck, folderManifest: ExportManifest?, manifestAhead: Pending<ManifestRead?>?, readJSON: Bool,
        readMarkdown: Bool
    ) -> ZipPass? {
        guard central.zipProblems.isEmpty, central.findings.isEmpty, let entries = central.entries else { return nil }
        guard case (let names, let places)? = Self.placedEntries(entries, readMarkdown: readMarkdown) else { return nil }
        let file: ZipFile
        do throws(ZipStructureError) { file = try ZipFile(url: url) } catch { return nil }
        var pass = ZipPass()
        // A zip's own manifest comes last: the memo size it allows is read from it first, on its own, while the central directory was checked.
        var manifestRead: EntryRead?
        if folderManifest == nil, let at = names.firstIndex(of: Exporter.manifestName) {
            let ahead = manifestAhead?.wait().flatMap { $0.placed == places[at] ? $0 : nil }
            guard let read = ahead ?? Self.readManifest(places[at], of: file, shown: joinPath(export.shown, Exporter.manifestName)) else {
                return nil
            }
            pass.manifestData = read.data
            pass.manifest = read.manifest
            manifestRead = EntryRead(index: at, size: read.data.count, sha256: read.sha256)
        }
        let memoBytes = folderManifest?.memoBytes ?? (try? pass.manifest?.get())?.memoBytes ?? ExportManifest.defaultMemoBytes
        let jsonAt = readJSON ? names.firstIndex(of: Exporter.jsonName) : nil
        let reader = OneThreadAtATime(jsonAt.map { _ in memosJSONReader(memoBytes: memoBytes) })
        let jobs = Self.jobs(places, skipping: manifestRead?.index, json: jsonAt)
        guard
            case (let found, let json)? = readJobs(
                jobs, names: names, places: places, of: file, json: jsonAt, reader: reader, readMarkdown: readMarkdown)
        else { return nil }
        var byIndex = [EntryRead?](repeating: nil, count: entries.count)
        for reads in found {
            guard let reads else { return nil }
            for read in reads { byIndex[read.index] = read }
        }
        if let manifestRead { byIndex[manifestRead.index] = manifestRead }
        pass.json = json
        // Made at their full size at once: growing them would hash every name again at each step.
        pass.seen.reserveCapacity(entries.count)
        pass.order.reserveCapacity(entries.count)
        pass.streamed.reserveCapacity(entries.count)
        for (index, read) in byIndex.enumerated() {
            guard let read else { return nil }
            let name = names[index]
            pass.order.append(name)
            pass.seen[name] = (read.size, read.sha256)
            pass.streamed.append(
                StreamedEntry(name: entries[index].name, size: read.size, declaredSize: Int64(places[index].size)))
            if let markdown = read.markdown { pass.markdown.append(markdown) }
        }
        return pass
    }

    /// Each entry's name and place, when every entry is one the pass on
    /// every core reads: stored or deflated, not encrypted, a regular file,
    /// its name UTF-8 and held once; nil when one is not.
    private static func placedEntries(_ entries: [CentralDirectoryCheck.Entry], readMarkdown: Bool) -> (names: [String], places: [PlacedEntry])? {
        var names: [String] = []
        names.reserveCapacity(entries.count)
        var places: [PlacedEntry] = []
        places.reserveCapacity(entries.count)
        var seenNames = Set<String>()
        for entry in entries {
            guard let placed = entry.placed, placed.method == 0 || placed.method == 8, entry.flags & 0x0001 == 0,
                let mode = entry.unixMode, mode & 0o170000 == 0o100000,
                !entry.name.contains(0), entry.name.last != UInt8(ascii: "/"),
                let name = String(validating: entry.name, as: UTF8.self), seenNames.insert(name).inserted
            else { return nil }
            // A Markdown file is held whole to read its front matter: one that says it is larger than any reckon writes is left to libarchive.
            guard !(readMarkdown && name.hasPrefix(Exporter.markdownName + "/") && placed.size > 1 << 30) else { return nil }
            names.append(name)
            places.append(placed)
        }
        return (names, places)
    }

    /// The jobs of the pass: each large entry on its own (and `memos.json`,
    /// at `jsonAt`), largest first, then runs of the others in order; the
    /// entry at `skipped` (the manifest, read already) in none.
    private static func jobs(_ places: [PlacedEntry], skipping skipped: Int?, json jsonAt: Int?) -> [[Int]] {
        var large: [Int] = []
        var runs: [[Int]] = []
        var run: [Int] = []
        var runBytes: UInt64 = 0
        for index in places.indices where index != skipped {
            if places[index].size >= 1 << 22 || index == jsonAt {
                large.append(index)
                continue
            }
            run.append(index)
            runBytes += places[index].size
            if run.count == 512 || runBytes >= 1 << 22 {
                runs.append(run)
                run = []
                runBytes = 0
            }
        }
        if !run.isEmpty { runs.append(run) }
        large.sort { (places[$0].size, $1) > (places[$1].size, $0) }
        return large.map { [$0] } + runs
    }

    /// Reads each job's entries on every core, `memos.json` through
    /// `reader`; nil when an entry is damaged or `memos.json` cannot be read.
    private func readJobs(
        _ jobs: [[Int]], names: [String], places: [PlacedEntry], of file: ZipFile, json jsonAt: Int?,
        reader: OneThreadAtATime<MemosJSONReader?>, readMarkdown: Bool
    ) -> (reads: [[EntryRead]?], json: MemosJSONReader.Facts?)? {
        let found = Mutex([[EntryRead]?](repeating: nil, count: jobs.count))
        let jsonFacts = Mutex<MemosJSONReader.Facts?>(nil)
        let broken = Atomic(false)
        workers.perform(iterations: jobs.count) { job in
            guard !broken.load(ordering: .relaxed) else { return }
            let inflater = EntryInflater()
            var reads: [EntryRead] = []
            reads.reserveCapacity(jobs[job].count)
            for index in jobs[job] {
                let name = names[index]
                let hasher = SHA256()
                var size = 0
                let keep = readMarkdown && name.hasPrefix(Exporter.markdownName + "/")
                var kept = Data()
                let feed = index == jsonAt
                let whole = try? inflater.read(places[index], of: file) { chunk in
                    hasher.update(chunk)
                    size += chunk.count
                    if keep { kept.append(contentsOf: chunk) }
                    if feed { try reader.value!.feed(chunk) }
                }
                guard whole == true else {
                    broken.store(true, ordering: .relaxed)
                    return
                }
                if feed {
                    guard let facts = try? reader.value!.finish() else {
                        broken.store(true, ordering: .relaxed)
                        return
                    }
                    jsonFacts.withLock { $0 = facts }
                }
                reads.append(
                    EntryRead(
                        index: index, size: size, sha256: hasher.finalize().hex,
                        markdown: keep ? MarkdownFile(path: name, memo: MarkdownExport.frontMatter(of: kept)) : nil))
            }
            found.withLock { $0[job] = reads }
        }
        guard !broken.load(ordering: .relaxed) else { return nil }
        return (found.withLock { $0 }, jsonFacts.withLock { $0 })
    }
}

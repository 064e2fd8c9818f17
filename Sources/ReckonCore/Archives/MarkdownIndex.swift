import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the newest run folder of a pipeline's export holds in `markdown/`,
/// kept beside the run folders as `.reckon-markdown-index`: for each memo
/// its fingerprint (the SHA-256 of its entry in `memos.json`, which holds
/// everything its Markdown file is made from), the file's name, SHA-256 and
/// inode, and the renderer's version. The next run reuses the file of every memo
/// whose fingerprint and computed name are unchanged, instead of rendering
/// and writing it again.
///
/// The index names the run it describes by the SHA-256 of that run's
/// `manifest.json`, so an index that does not belong to the folder `latest`
/// points at is never used; its records are in export order, so a run reads
/// it alongside its own memos, one record at a time, and memory does not
/// grow with the number of memos.
package enum MarkdownIndex {
    /// The index's name in the runs' folder.
    package static let fileName = ".reckon-markdown-index"
    /// The first bytes of an index: its format, version 2.
    static let magic = Array("reckon-markdown-index 2\n".utf8)
    static let headerSize = magic.count + 8 + 32

    /// One memo's Markdown file, as the index records it.
    package struct Entry: Equatable {
        var createdAt: Timestamp?
        var id: MemoID
        var fingerprint: SHA256.Digest
        /// The file's path in the run folder (`markdown/…`).
        var path: String
        var digest: SHA256.Digest
        /// The file's inode when reckon wrote it (or linked it): a file
        /// replaced by another, even one with the same bytes, is not linked.
        var inode: UInt64

        func write(to record: inout Record) {
            record.add(createdAt)
            record.add(id)
            record.add(fingerprint)
            record.add(path)
            record.add(digest)
            record.add(inode)
        }

        init(createdAt: Timestamp?, id: MemoID, fingerprint: SHA256.Digest, path: String, digest: SHA256.Digest, inode: UInt64) {
            self.createdAt = createdAt
            self.id = id
            self.fingerprint = fingerprint
            self.path = path
            self.digest = digest
            self.inode = inode
        }

        init(from reader: inout RecordReader) {
            self.init(createdAt: reader.timestamp(), id: reader.id(), fingerprint: reader.digest(), path: reader.text() ?? "",
                      digest: reader.digest(), inode: reader.uint64())
        }
    }

    /// The index of the run `latest` points at in `runs`, when there is one
    /// that belongs to it and was written by this renderer; nil otherwise,
    /// and then every Markdown file is rendered.
    package static func previous(in runs: URL) -> Previous? {
        let latest = runs.appendingPathComponent(ExportFolder.latestName)
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: latest.path),
              ExportFolder.runOrder(target) != nil else { return nil }
        let folder = runs.appendingPathComponent(target)
        // The run folder and its `markdown/` as they are, never through a link.
        guard let run = OpenFolder(folder.path), let markdown = OpenFolder(Exporter.markdownName, in: run) else { return nil }
        let fd = open(runs.appendingPathComponent(fileName).path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let previous = Previous(folder: folder, markdown: markdown, fd: fd)
        var header = [UInt8](repeating: 0, count: headerSize)
        guard previous.read(into: &header), header.starts(with: magic) else { return nil }
        var reader = RecordReader(header[magic.count...])
        guard reader.uint64() == MarkdownExport.version,
              let manifest = try? Exporter.sizeAndDigest(of: folder.appendingPathComponent(Exporter.manifestName)),
              reader.digest() == manifest.1 else { return nil }
        return previous
    }

    /// An index being read in export order, alongside the memos of a run.
    /// Owns its descriptor; not `Sendable`.
    package final class Previous {
        /// The run folder the index describes.
        package let folder: URL
        /// Its `markdown/`, opened without following a link.
        let markdown: OpenFolder
        private let fd: Int32
        private var buffer: [UInt8] = []
        private var at = 0
        private var pending: Entry?
        private var ended = false

        fileprivate init(folder: URL, markdown: OpenFolder, fd: Int32) {
            self.folder = folder
            self.markdown = markdown
            self.fd = fd
        }

        deinit { close(fd) }

        /// The record of the memo `id` created at `createdAt`, when the
        /// index holds one. Memos must be asked for in export order.
        package func entry(createdAt: Timestamp?, id: MemoID) -> Entry? {
            while let entry = peek() {
                if entry.id == id && entry.createdAt == createdAt { return entry }
                guard JSONExport.precedes(created: entry.createdAt, entry.id, created: createdAt, id) else { return nil }
                pending = nil
            }
            return nil
        }

        /// The next record, read when needed; nil at the end or at a
        /// record that cannot be read (the rest is then not used).
        private func peek() -> Entry? {
            if let pending { return pending }
            guard !ended else { return nil }
            var length = [UInt8](repeating: 0, count: 4)
            guard read(into: &length) else {
                ended = true
                return nil
            }
            let count = length.reversed().reduce(0) { $0 << 8 | Int($1) }
            var bytes = [UInt8](repeating: 0, count: count)
            // The shortest record is 1 + 16 + 32 + 1 + 32 + 8 bytes; a record
            // of another length, or one whose fields do not fill it
            // exactly, was not written by this index.
            guard count >= 90, count < 1 << 16, read(into: &bytes) else {
                ended = true
                return nil
            }
            var reader = RecordReader(bytes[...])
            let entry = Entry(from: &reader)
            guard reader.readWhole else {
                ended = true
                return nil
            }
            pending = entry
            return pending
        }

        /// Fills `bytes` from the file; false when it ends first.
        fileprivate func read(into bytes: inout [UInt8]) -> Bool {
            var done = 0
            while done < bytes.count {
                if at == buffer.count {
                    buffer = [UInt8](repeating: 0, count: 1 << 16)
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { return false }
                    buffer.removeLast(buffer.count - count)
                    at = 0
                }
                let take = min(bytes.count - done, buffer.count - at)
                bytes.replaceSubrange(done..<done + take, with: buffer[at..<at + take])
                at += take
                done += take
            }
            return true
        }
    }

    /// Writes a run's index, record by record in export order, to a
    /// temporary file in the runs' folder; `install` puts it in place once
    /// the run is published. Owns its descriptor; not `Sendable`.
    package final class Writer {
        package let url: URL
        private var fd: Int32
        private var buffer: [UInt8] = []

        /// Creates the temporary file at `url`, replacing one a dead run left.
        package init(url: URL) throws(OutputError) {
            self.url = url
            unlink(url.path)
            fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
            buffer = [UInt8](repeating: 0, count: headerSize)
        }

        deinit { if fd >= 0 { close(fd) } }

        func append(_ entry: Entry) throws(OutputError) {
            var record = Record()
            entry.write(to: &record)
            withUnsafeBytes(of: UInt32(record.bytes.count).littleEndian) { buffer += $0 }
            buffer += record.bytes
            if buffer.count >= 1 << 16 { try flush() }
        }

        /// Writes the header, naming the run by its manifest's SHA-256, and
        /// flushes the file to disk.
        func finish(manifest: SHA256.Digest) throws(OutputError) {
            try flush()
            var header = Record()
            header.bytes = magic
            header.add(UInt64(MarkdownExport.version))
            header.add(manifest)
            let written = header.bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress!, $0.count, 0) }
            guard written == header.bytes.count, fsync(fd) == 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
            close(fd)
            fd = -1
        }

        private func flush() throws(OutputError) {
            guard buffer.withUnsafeBytes({ writeAll(fd, $0) }) else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
            buffer.removeAll(keepingCapacity: true)
        }

        /// Renames the finished index into place in `runs`.
        package func install(in runs: URL) throws(OutputError) {
            let target = runs.appendingPathComponent(fileName)
            guard rename(url.path, target.path) == 0 else { throw OutputError(path: target.path, reason: AtomicFile.lastError()) }
        }

        /// Removes the temporary file of a run that was not published.
        package func discard() {
            unlink(url.path)
        }
    }
}

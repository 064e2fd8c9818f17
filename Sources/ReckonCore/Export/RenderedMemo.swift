import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension Exporter {
    /// A memo as it goes into `memos.json` and `markdown/`, rendered on any
    /// core, or taken whole from the previous run.
    /// Handed from core to core and held in several lists at once, so
    /// a class: passing one on costs one reference, not a copy of each field.
    final class Rendered: Sendable {
        let id: MemoID
        let createdAt: Timestamp?
        let modified: Timestamp
        let archived: Bool
        /// The memo as read; nil when it was taken from the previous run unread.
        let memo: Memo?
        /// Its entry in `memos.json`; empty when the memo is `streamed`.
        let json: Data
        /// Whether the memo is long (`streamedBytes` or more of body): then
        /// its entry and Markdown file are written straight from its text, in
        /// pieces, and never held whole.
        let streamed: Bool
        /// The SHA-256 of `json`, which holds everything the Markdown file is
        /// made from: an unchanged fingerprint means an unchanged file. Nil
        /// when no index is read or written.
        let fingerprint: SHA256.Digest?
        let shortName: String
        let longName: String
        /// Whether a Markdown file is written.
        let withMarkdown: Bool

        init(_ memo: Memo, markdown withMarkdown: Bool, fingerprinted: Bool) {
            id = memo.id
            createdAt = memo.createdAt
            modified = memo.modifiedAt
            archived = memo.archivedAt != nil
            self.memo = memo
            streamed = (memo.body?.utf8.count ?? 0) >= Exporter.streamedBytes
            json = streamed ? Data() : JSONExport.entry(of: memo)
            if !fingerprinted {
                fingerprint = nil
            } else if streamed {
                let hasher = SHA256()
                JSONExport.write(memo, depth: 2) { hasher.update($0) }
                fingerprint = hasher.finalize()
            } else {
                fingerprint = json.withUnsafeBytes { SHA256.digest(of: $0) }
            }
            let names = MarkdownExport.fileNames(memo)
            shortName = "\(Exporter.markdownName)/\(names.short)"
            longName = "\(Exporter.markdownName)/\(names.long)"
            self.withMarkdown = withMarkdown
        }

        /// A memo the previous run holds whole: its record there, and its
        /// entry in that run's `memos.json`, checked against the record.
        init(taking entry: MarkdownIndex.Entry, json: Data, names: (short: String, long: String), markdown withMarkdown: Bool) {
            id = entry.id
            createdAt = entry.createdAt
            modified = entry.modified
            archived = entry.archived
            memo = nil
            self.json = json
            streamed = false
            fingerprint = entry.fingerprint
            shortName = names.short
            longName = names.long
            self.withMarkdown = withMarkdown
        }

        /// Thrown for a memo taken unread whose previous Markdown file
        /// cannot be reused: it must be read to be rendered.
        struct NeedsReading: Error {}

        /// Renders and writes the Markdown file under the short name when
        /// allowed and free, else under the long one, read-only. `staging`
        /// is the export folder's path.
        func writeMarkdown(into staging: String, mayTakeShortName: Bool) throws -> MarkdownFile? {
            guard withMarkdown else { return nil }
            guard let memo else { throw NeedsReading() }
            // A long memo's file is written from its text in pieces, and the zip reads it back from the file.
            var data = Data()
            var size = 0
            func write(_ path: String) throws -> (digest: SHA256.Digest, inode: UInt64)? {
                (data, size) = (Data(), 0)
                return try OutputFile.writeReadOnly(toNew: staging + "/" + path) { write in
                    try MarkdownExport.write(memo) { bytes in
                        if !streamed { data.append(contentsOf: bytes) }
                        size += bytes.count
                        try write(bytes)
                    }
                }
            }
            var path = shortName
            var created = mayTakeShortName ? try write(path) : nil
            if created == nil {
                path = longName
                created = try write(path)
                guard created != nil else { throw OutputError(path: staging + "/" + path, reason: "something already stands there") }
            }
            return MarkdownFile(
                written: Written(path: path, size: size, digest: created!.digest, modified: modified),
                inode: created!.inode, data: streamed ? nil : data)
        }

        /// The previous run's file of this memo, read, that may be put into
        /// the staging folder in place of a rendered one: `name` in the
        /// previous `markdown/`, `target` its path in staging.
        struct PreviousFile {
            var entry: MarkdownIndex.Entry
            var markdown: OpenFolder
            var name: String
            var target: String
            var data: Data
            var info: stat
        }

        /// Reads the previous run's file (`entry`, in `markdown`) when this
        /// run computes the same name for the memo and the file still holds
        /// the bytes the index (and so the previous manifest) lists; nil when
        /// the file is to be rendered instead. Never through a link.
        func readPrevious(_ entry: MarkdownIndex.Entry, from markdown: OpenFolder, into staging: String, mayTakeShortName: Bool)
            -> PreviousFile?
        {
            guard withMarkdown, entry.fingerprint == fingerprint else { return nil }
            // A short name this run may not take, or finds taken (as the
            // name is made), or a long one while the short is free: rendered.
            guard
                entry.path == shortName
                    ? mayTakeShortName
                    : entry.path == longName && (!mayTakeShortName || FileKind(path: staging + "/" + shortName) != .missing)
            else { return nil }
            let name = String(entry.path.dropFirst(Exporter.markdownName.count + 1))
            guard let fd = try? openForReading(atPath: name, in: markdown) else { return nil }
            defer { close(fd) }
            var info = stat()
            var data = Data()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 1 << 30,
                (try? readWhole(fd, size: Int(info.st_size), into: &data)) != nil,
                data.withUnsafeBytes({ SHA256.digest(of: $0) }) == entry.digest
            else { return nil }
            return PreviousFile(entry: entry, markdown: markdown, name: name, target: staging + "/" + entry.path, data: data, info: info)
        }

        /// Puts the previous run's file, read, into the staging folder. By a
        /// hard link only when it is the very file reckon wrote there (its
        /// inode) and still read-only, so nothing outside the runs shares the
        /// new file; else, or where links are not used, by a copy of the
        /// bytes. Links go into `markdown`, the staging `markdown/` folder,
        /// opened once, so no path is walked again for each file; nil there
        /// (links not used, or the folder not opened) copies. Gives the file
        /// and whether it was linked (then `holdsLinked` checks the link);
        /// nil, leaving nothing behind, when the file is to be rendered
        /// instead. The previous run is left as it is.
        func place(_ previous: PreviousFile, linkingInto markdown: OpenFolder?) throws -> (file: MarkdownFile, linked: Bool)? {
            let (entry, data, info) = (previous.entry, previous.data, previous.info)
            if let markdown, UInt64(info.st_ino) == entry.inode && info.st_mode & 0o7777 == 0o444 {
                if linkat(previous.markdown.fd, previous.name, markdown.fd, previous.name, 0) == 0 {
                    let file = MarkdownFile(
                        written: Written(path: entry.path, size: data.count, digest: entry.digest, modified: modified),
                        inode: entry.inode, data: forZip(data), reused: true)
                    return (file, true)
                }
                // The name taken: rendered. Another file system, or one without links: copied.
                guard errno != EEXIST else { return nil }
            }
            guard let created = try OutputFile.writeReadOnly(data, toNew: previous.target) else { return nil }
            let file = MarkdownFile(
                written: Written(path: entry.path, size: data.count, digest: created.digest, modified: modified),
                inode: created.inode, data: forZip(data), reused: true)
            return (file, false)
        }

        /// Whether the name the previous file was linked under in `markdown`
        /// holds the file just read; another swapped in meanwhile goes.
        func holdsLinked(_ previous: PreviousFile, in markdown: OpenFolder) -> Bool {
            var linked = stat()
            guard fstatat(markdown.fd, previous.name, &linked, AT_SYMLINK_NOFOLLOW) == 0, linked.st_ino == previous.info.st_ino,
                linked.st_dev == previous.info.st_dev
            else {
                unlinkat(markdown.fd, previous.name, 0)
                return false
            }
            return true
        }

        /// A reused file's bytes, kept for the zip unless they are a long
        /// memo's, which the zip reads from the file instead.
        private func forZip(_ data: Data) -> Data? { data.count >= Exporter.streamedBytes ? nil : data }
    }

    /// A Markdown file written, with its inode (for the next run's index)
    /// and its bytes for the zip (nil for a long memo's: the zip reads the file).
    struct MarkdownFile: Sendable {
        var written: Written
        var inode: UInt64
        var data: Data?
        /// Whether it is the previous run's file, linked or copied: then its
        /// zip entry may be copied from the previous run's zip.
        var reused = false
    }
}

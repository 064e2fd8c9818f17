import Foundation
import Synchronization

/// Verify of a zip's central directory and local headers, and of
/// the data each entry holds, against what reckon writes.
extension ExportVerifier {
    /// An entry as libarchive read it: its name's bytes, the bytes read
    /// from it and the size its header declares.
    struct StreamedEntry {
        var name: [UInt8]
        var size: Int
        var declaredSize: Int64?
    }

    /// What the zip's central directory says of its entries, each record
    /// checked against the local header and data descriptor it points at.
    struct CentralDirectoryCheck: Sendable {
        struct Entry: Sendable {
            /// The name in the central directory, and in the entry's own
            /// header (nil when that could not be read).
            var name: [UInt8]
            var headerName: [UInt8]?
            var size: UInt64
            /// Where its data lies, when its header could be read.
            var placed: PlacedEntry?
            var flags: UInt16 = 0
            /// Its Unix mode, when the zip was made on Unix (the high half of its external attributes).
            var unixMode: UInt32?
        }

        /// A disagreement about one entry: its place in the directory (from
        /// 1), the name it is shown under (its own header's, which libarchive
        /// reads, when that could be read) and what disagrees.
        struct Finding: Sendable {
            var entry: Int
            var name: String
            var words: String
        }

        /// Every record, in order; nil when the directory cannot be read.
        var entries: [Entry]?
        /// What is wrong with the zip as a whole.
        var zipProblems: [String] = []
        var findings: [Finding] = []
    }

    /// A zip's central directory as read, before it is checked: the file,
    /// its end record, and every record in order.
    struct CentralDirectoryListing: Sendable {
        var file: ZipFile
        var end: CentralDirectoryEnd
        var records: [CentralRecord]
    }

    /// Reads every record of the central directory of the zip at `url`.
    static func listCentralDirectory(of url: URL) -> Result<CentralDirectoryListing, ZipStructureError> {
        Result { () throws(ZipStructureError) in
            let file = try ZipFile(url: url)
            let end = try CentralDirectoryEnd.read(file)
            var records: [CentralRecord] = []
            // A record takes at least 46 bytes: a count the directory cannot hold reserves nothing more.
            records.reserveCapacity(Int(min(end.count, end.size / 46)))
            try CentralRecord.forEach(in: file, end) { records.append($0) }
            return CentralDirectoryListing(file: file, end: end, records: records)
        }
    }

    /// Reads the central directory of the zip at `url` on its own and checks
    /// it against the entries (`checkCentralDirectory(_:)`).
    static func checkCentralDirectory(of url: URL, on workers: Workers) -> CentralDirectoryCheck {
        checkCentralDirectory(listCentralDirectory(of: url), on: workers)
    }

    /// Checks that a zip's central directory, as `listed`, and its entries
    /// agree: each record's name, method, flags, version, time, extra
    /// fields, CRC-32 and sizes against its entry's local header (and data
    /// descriptor), and that the entries lie one after another from the
    /// start of the file to the directory, where the records put them.
    static func checkCentralDirectory(_ listed: Result<CentralDirectoryListing, ZipStructureError>, on workers: Workers) -> CentralDirectoryCheck {
        var check = CentralDirectoryCheck()
        let (file, end, records): (ZipFile, CentralDirectoryEnd, [CentralRecord])
        switch listed {
        case .success(let listing): (file, end, records) = (listing.file, listing.end, listing.records)
        case .failure(let error):
            check.zipProblems.append("the zip's central directory cannot be read: " + error.words)
            return check
        }
        // Each record against its own header on every core (a read each), then where each lies against where the one before ended, in order.
        let checked = mapOnEveryCore(records, chunkSize: 4096, on: workers) { slice in
            slice.map { checkRecord($0, directory: end, file: file) }
        }.joined()
        var entries: [CentralDirectoryCheck.Entry] = []
        entries.reserveCapacity(records.count)
        // Where the next entry should start: where the one before it ended.
        var next: UInt64? = 0
        for record in checked {
            entries.append(record.entry)
            let placement = record.placed.map { placementProblems(disk: $0.disk, offset: $0.offset, expectedAt: next) } ?? []
            let problems = placement + record.problems
            let name = String(decoding: record.entry.headerName ?? record.entry.name, as: UTF8.self)
            check.findings += problems.map { .init(entry: entries.count, name: name, words: $0) }
            next = record.ends
        }
        if let next, next != end.offset {
            check.zipProblems.append(
                next < end.offset
                    ? "the zip's last entry ends at byte \(next), but its central directory starts at byte \(end.offset): the bytes between belong to no entry"
                    : "the zip's last entry ends at byte \(next), past the start of its central directory at byte \(end.offset)")
        }
        if end.commentLength > 0 {
            check.zipProblems.append("the zip ends with a comment of \(counted(end.commentLength, "byte")), which reckon never writes")
        }
        check.entries = entries
        return check
    }

    /// What one central record gave: its entry, what disagrees (but for
    /// where it lies), the disk and byte the record puts it at (nil when
    /// they cannot be read), and where it ends (nil when that cannot be told).
    private struct CheckedRecord: Sendable {
        var entry: CentralDirectoryCheck.Entry
        var problems: [String]
        var placed: (disk: UInt32, offset: UInt64)?
        var ends: UInt64?
    }

    /// One central record against the local header (and data descriptor)
    /// it points at.
    private static func checkRecord(_ record: CentralRecord, directory end: CentralDirectoryEnd, file: ZipFile) -> CheckedRecord {
        let wide: (compressedSize: UInt64, uncompressedSize: UInt64, localHeaderOffset: UInt64, diskStart: UInt32)
        do throws(ZipStructureError) {
            wide = try record.wide()
        } catch {
            return CheckedRecord(entry: .init(name: record.name, size: UInt64(record.uncompressedSize)), problems: [error.words])
        }
        var entry = CentralDirectoryCheck.Entry(
            name: record.name, size: wide.uncompressedSize, flags: record.flags,
            unixMode: record.versionMadeBy >> 8 == 3 ? record.externalAttributes >> 16 : nil)
        let placed = (disk: wide.diskStart, offset: wide.localHeaderOffset)
        let header: LocalHeader
        do throws(ZipStructureError) {
            header = try LocalHeader.read(at: wide.localHeaderOffset, before: end.offset, in: file)
        } catch {
            return CheckedRecord(
                entry: entry, problems: ["\(says) puts this entry's header at byte \(wide.localHeaderOffset), but \(error.words)"], placed: placed)
        }
        entry.headerName = header.name
        entry.placed = PlacedEntry(
            dataOffset: header.dataOffset, compressedSize: wide.compressedSize, size: wide.uncompressedSize, crc32: record.crc32,
            method: record.method)
        let data = checkData(
            record, compressedSize: wide.compressedSize, uncompressedSize: wide.uncompressedSize, header: header, directory: end, file: file)
        let layout = layoutProblems(record, header, size: wide.uncompressedSize, compressedSize: wide.compressedSize, offset: wide.localHeaderOffset)
        return CheckedRecord(entry: entry, problems: layout + headerProblems(record, header) + data.problems, placed: placed, ends: data.ends)
    }

    /// What a finding on an entry's fields starts with: the central
    /// directory, which unzip and Python's zipfile go by.
    static let says = "the zip's central directory"
    /// How a finding ends on a field the central directory and the entry's
    /// own header both hold.
    private static let goesBy = "; Python's zipfile would go by the first"

    /// Where the central directory puts an entry (on `disk`, at byte
    /// `offset`) against where it should be, in words: on disk 0, at
    /// `expectedAt` when that is known.
    private static func placementProblems(disk: UInt32, offset: UInt64, expectedAt: UInt64?) -> [String] {
        var problems: [String] = []
        if disk != 0 { problems.append("\(says) puts this entry on disk \(disk), but the zip is one file") }
        if let expectedAt, offset != expectedAt {
            problems.append(
                "\(says) puts this entry at byte \(offset), but "
                    + (expectedAt == 0 ? "the first entry starts at byte 0" : "the entry before it ends at byte \(expectedAt)"))
        }
        return problems
    }

    /// The fields a central record and its entry's local header both hold,
    /// but for the CRC-32 and sizes (`checkData`), in words where they
    /// differ: the name, method, flags, version needed, time and extra
    /// fields; and a name beyond ASCII that the record does not mark as UTF-8.
    private static func headerProblems(_ record: CentralRecord, _ header: LocalHeader) -> [String] {
        var problems: [String] = []
        if header.name != record.name {
            problems.append(
                "\(says) names this entry \(shownName(record.name)), but its own header says \(shownName(header.name))"
                    + differingByte(record.name, header.name) + "; unzip would see the first")
        }
        if header.method != record.method {
            problems.append(
                "\(says) says this entry is \(methodWords(record.method)), but its own header says \(methodWords(header.method))" + goesBy)
        }
        if header.flags != record.flags {
            problems.append(
                "\(says) gives this entry the flags \(hex(record.flags)), but its own header says \(hex(header.flags))"
                    + " (they differ in: \(flagWords(header.flags ^ record.flags)))" + goesBy)
        }
        // reckon flags every name as UTF-8; unflagged, a name beyond ASCII reads as another one in zipfile (as CP437).
        if record.name.contains(where: { $0 >= 0x80 }) && record.flags & 0x0800 == 0 {
            problems.append("\(says) does not mark this entry's name as UTF-8, so Python's zipfile would read it as another name")
        }
        if header.versionNeeded != record.versionNeeded {
            problems.append(
                "\(says) says this entry needs zip version \(versionWords(record.versionNeeded)) to extract, "
                    + "but its own header says \(versionWords(header.versionNeeded))" + goesBy)
        }
        if header.modified != record.modified {
            problems.append(
                "\(says) dates this entry \(dosTimeWords(record.modified)), but its own header says \(dosTimeWords(header.modified))" + goesBy)
        }
        if withoutZip64(record.extra) != withoutZip64(header.extra) {
            problems.append("\(says) gives this entry other extra fields than its own header does" + goesBy)
        }
        return problems
    }

    /// The same extra fields, but for zip64's, which differs between a
    /// central record and its local header by design; nil when their
    /// lengths do not add up.
    static func withoutZip64(_ extra: [UInt8]) -> [UInt8]? {
        guard let fields = zipExtraFields(extra) else { return nil }
        var bytes: [UInt8] = []
        for field in fields where field.id != zip64FieldID {
            let length = UInt16(field.data.count)
            bytes += [UInt8(field.id & 0xFF), UInt8(field.id >> 8), UInt8(length & 0xFF), UInt8(length >> 8)]
            bytes += field.data
        }
        return bytes
    }

    /// An entry's data against its central record's CRC-32 and sizes
    /// (`compressedSize` and `uncompressedSize`, from the zip64 field where
    /// the record keeps them there): the data must end before the central
    /// directory, and the local header, or with bit 3 the data descriptor
    /// after the data, must give the same values. What disagrees, and where
    /// the entry ends (nil when that cannot be told).
    private static func checkData(
        _ record: CentralRecord, compressedSize: UInt64, uncompressedSize: UInt64, header: LocalHeader,
        directory end: CentralDirectoryEnd, file: ZipFile
    ) -> (problems: [String], ends: UInt64?) {
        guard compressedSize <= end.offset - header.dataOffset else {
            return (
                ["\(says) says this entry is \(counted(compressedSize, "byte")) compressed, which runs past the start of the central directory"], nil
            )
        }
        var problems: [String] = []
        let central = valuesWords(record.crc32, compressedSize, uncompressedSize)
        /// That the header gives other values than the central record.
        func headerDisagrees() -> String {
            "\(says) gives this entry \(central), but its own header says "
                + valuesWords(header.crc32, header.compressedSize, header.uncompressedSize) + goesBy
        }
        let dataEnd = header.dataOffset + compressedSize
        guard header.sizesFollowData else {
            if (header.crc32, header.compressedSize, header.uncompressedSize) != (record.crc32, compressedSize, uncompressedSize) {
                problems.append(headerDisagrees())
            }
            return (problems, dataEnd)
        }
        // Bit 3: the header's CRC-32 and sizes may be zero (libarchive
        // writes the uncompressed size it was told); the data descriptor
        // after the data holds them.
        func agrees<T: Equatable & BinaryInteger>(_ value: T, _ central: T) -> Bool { value == 0 || value == central }
        if !agrees(header.crc32, record.crc32) || !agrees(header.compressedSize, compressedSize)
            || !agrees(header.uncompressedSize, uncompressedSize)
        {
            problems.append(headerDisagrees())
        }
        let descriptor: DataDescriptor
        do throws(ZipStructureError) {
            descriptor = try DataDescriptor.read(at: dataEnd, wide: header.hasZip64Field, before: end.offset, in: file)
        } catch {
            problems.append("\(says) says this entry is \(counted(compressedSize, "byte")) compressed, but after that many bytes \(error.words)")
            return (problems, nil)
        }
        if (descriptor.crc32, descriptor.compressedSize, descriptor.uncompressedSize) != (record.crc32, compressedSize, uncompressedSize) {
            problems.append(
                "\(says) gives this entry \(central), but the data descriptor after its data says "
                    + valuesWords(descriptor.crc32, descriptor.compressedSize, descriptor.uncompressedSize) + goesBy)
        }
        return (problems, dataEnd + UInt64(descriptor.length))
    }

    /// An entry's CRC-32 and sizes as words: `CRC-32 6b807e78, 140 bytes
    /// compressed and 178 uncompressed`.
    private static func valuesWords(_ crc: UInt32, _ compressed: UInt64, _ uncompressed: UInt64) -> String {
        "CRC-32 \(crcWords(crc)), \(counted(compressed, "byte")) compressed and \(uncompressed) uncompressed"
    }

    /// The central directory's records against the entries libarchive
    /// read, in order: as many, the same names byte for byte, the same
    /// sizes. (That each is a regular file is `layoutProblems`'s.)
    static func compare(_ central: [CentralDirectoryCheck.Entry], with streamed: [StreamedEntry], into check: inout CentralDirectoryCheck) {
        guard central.count == streamed.count else {
            check.zipProblems.append(
                "the zip's central directory lists \(counted(central.count, "entry", "entries")), but \(streamed.count) \(streamed.count == 1 ? "was" : "were") read from the zip"
            )
            return
        }
        let says = "the zip's central directory"
        for (n, (record, read)) in zip(central, streamed).enumerated() {
            let name = String(decoding: read.name, as: UTF8.self)
            func found(_ words: String) { check.findings.append(.init(entry: n + 1, name: name, words: words)) }
            // A header that names the entry otherwise was found already.
            if read.name != record.name && record.headerName == record.name {
                found(
                    "\(says) names this entry \(shownName(record.name)), but \(shownName(read.name)) was read in its place"
                        + differingByte(record.name, read.name) + "; unzip would see the first")
            }
            if let other = [Int64(read.size), read.declaredSize].compactMap({ $0 }).first(where: { Int64(exactly: record.size) != $0 }) {
                found("\(says) says this entry is \(counted(record.size, "byte")), but reading it gives \(other)")
            }
        }
    }

    /// Puts what the central directory check found into `result`: a
    /// finding on the file check of its entry, which is then not whole,
    /// or on the zip when no entry of that name was checked.
    static func report(_ central: CentralDirectoryCheck, zip: String, into result: inout ExportVerification) {
        for words in central.zipProblems { result.problems.append(.init(path: zip, message: words)) }
        let shown = 20
        for finding in central.findings.prefix(shown) {
            if let at = result.files.firstIndex(where: { $0.place == .zip && $0.path == finding.name }) {
                if result.files[at].status == .ok {
                    result.files[at].status = .unreadable
                    result.files[at].problem = finding.words
                } else {
                    result.files[at].problem = [result.files[at].problem, finding.words].compactMap { $0 }.joined(separator: "; ")
                }
            } else {
                result.problems.append(.init(path: zip, message: "entry \(finding.entry), \(quoted(finding.name, limit: 200)): \(finding.words)"))
            }
        }
        if central.findings.count > shown {
            result.problems.append(
                .init(
                    path: zip,
                    message: "\(central.findings.count - shown) more disagreements between the zip's central directory "
                        + "and its entries are not shown"))
        }
    }

    /// A name from a zip, quoted for a message.
    private static func shownName(_ bytes: [UInt8]) -> String { quoted(String(decoding: bytes, as: UTF8.self), limit: 200) }

    /// Where two names that read alike differ (bytes that are not UTF-8 show as one mark); "" when they read differently.
    private static func differingByte(_ a: [UInt8], _ b: [UInt8]) -> String {
        guard shownName(a) == shownName(b) else { return "" }
        let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        return " (they differ in byte \(at + 1) of the name)"
    }

    static func hex(_ flags: UInt16) -> String {
        let digits = String(flags, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    private static func crcWords(_ crc: UInt32) -> String {
        let digits = String(crc, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The general-purpose flags in words (APPNOTE 4.4.4).
    static func flagWords(_ flags: UInt16) -> String {
        let known: [Int: String] = [0: "encrypted", 3: "sizes after the data", 11: "UTF-8 name"]
        return (0..<16).filter { flags & (1 << $0) != 0 }.map { known[$0] ?? "bit \($0)" }.joined(separator: ", ")
    }

    static func methodWords(_ method: UInt16) -> String {
        switch method {
        case 0: "stored without compression (method 0)"
        case 8: "deflated (method 8)"
        case 12: "compressed with bzip2 (method 12)"
        case 14: "compressed with LZMA (method 14)"
        case 93: "compressed with Zstandard (method 93)"
        case 95: "compressed with XZ (method 95)"
        case 98: "compressed with PPMd (method 98)"
        case 99: "encrypted with AES (method 99)"
        default: "compressed with method \(method)"
        }
    }

    static func versionWords(_ version: UInt16) -> String { "\(version / 10).\(version % 10)" }

    /// An MS-DOS time and date (APPNOTE 4.4.6) as `2026-04-18 09:15:00`.
    private static func dosTimeWords(_ value: UInt32) -> String {
        let date = value >> 16
        let time = value & 0xFFFF
        func two(_ n: UInt32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(1980 + (date >> 9))-\(two(date >> 5 & 0xF))-\(two(date & 0x1F)) \(two(time >> 11)):\(two(time >> 5 & 0x3F)):\(two((time & 0x1F) * 2))"
    }

    /// What a Unix mode makes a file, for one that is not a regular file.
    static func kindWords(_ mode: UInt32) -> String {
        switch mode & 0o170000 {
        case 0o040000: "a folder"
        case 0o120000: "a link"
        case 0o140000: "a socket"
        case 0o010000: "a FIFO"
        case 0o020000: "a character device"
        case 0o060000: "a block device"
        default: "of no file type"
        }
    }
}

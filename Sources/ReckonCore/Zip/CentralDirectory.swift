import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// A plain reader of a zip's own account of its entries, apart from
// libarchive: the end records, the central directory, and the local header
// and data descriptor each central record points at. libarchive takes an
// entry's name and method from its local header; unzip and Python's zipfile
// take them from the central directory, so `verify` reads both and compares.
// Field layout: PKWARE's APPNOTE.TXT, section 4.3 (4.5 for extra fields).
// Every offset, length and count read from the file is checked against the
// file's size before anything is read or allocated for it.

/// What is wrong with a zip's structure, in words.
package struct ZipStructureError: Error, Equatable {
    package var words: String
}

/// A zip file opened to read its structure at given offsets. Its
/// descriptor is only ever read at an offset (`pread`), so threads may
/// share it.
package final class ZipFile: @unchecked Sendable {
    package let size: UInt64
    private let fd: Int32

    package init(url: URL) throws(ZipStructureError) {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ZipStructureError(words: "the file cannot be opened: \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw ZipStructureError(words: "the file cannot be examined: \(String(cString: strerror(code)))")
        }
        self.fd = fd
        size = UInt64(max(info.st_size, 0))
    }

    /// Takes over `descriptor`, open for reading a file of `size` bytes.
    package init(descriptor: Int32, size: UInt64) {
        fd = descriptor
        self.size = size
    }

    deinit { close(fd) }

    /// The `count` bytes at `offset`; an error naming `what` when they do
    /// not all lie inside the file, checked before anything is allocated.
    package func bytes(_ count: Int, at offset: UInt64, _ what: @autoclosure () -> String) throws(ZipStructureError) -> [UInt8] {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
            throw ZipStructureError(words: "\(what()) would run past the end of the file, at byte \(size)")
        }
        guard count > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let read = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else {
                let reason = read < 0 ? String(cString: strerror(errno)) : "the file ended early"
                throw ZipStructureError(words: "byte \(offset + UInt64(done)) cannot be read: \(reason)")
            }
            done += read
        }
        return buffer
    }

    /// Fills `buffer` with the bytes at `offset`; false when they cannot
    /// all be read (the file ends early, or reading fails).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool { readFully(fd, into: buffer, at: off_t(offset)) }
}

/// Little-endian numbers inside a buffer read from a zip.
extension Array where Element == UInt8 {
    func le16(_ at: Int) -> UInt16 { UInt16(self[at]) | UInt16(self[at + 1]) << 8 }
    func le32(_ at: Int) -> UInt32 { UInt32(le16(at)) | UInt32(le16(at + 2)) << 16 }
    func le64(_ at: Int) -> UInt64 { UInt64(le32(at)) | UInt64(le32(at + 4)) << 32 }
    /// Whether the four bytes at `at` are `PK` and the two of `signature`.
    func hasSignature(_ signature: (UInt8, UInt8), at: Int) -> Bool {
        at >= 0 && at + 4 <= count && self[at] == 0x50 && self[at + 1] == 0x4B && self[at + 2] == signature.0 && self[at + 3] == signature.1
    }
}

/// The fields of an extra field (APPNOTE 4.5.1), each its id and data, in
/// order; nil when their lengths do not add up to the whole.
package func zipExtraFields(_ extra: [UInt8]) -> [(id: UInt16, data: ArraySlice<UInt8>)]? {
    var fields: [(id: UInt16, data: ArraySlice<UInt8>)] = []
    var at = 0
    while at < extra.count {
        guard extra.count - at >= 4 else { return nil }
        let length = Int(extra.le16(at + 2))
        guard extra.count - at - 4 >= length else { return nil }
        fields.append((extra.le16(at), extra[(at + 4)..<(at + 4 + length)]))
        at += 4 + length
    }
    return fields
}

/// The id of the zip64 extended information field (APPNOTE 4.5.3).
let zip64FieldID: UInt16 = 0x0001

/// The end of a zip's central directory (APPNOTE 4.3.14–4.3.16): where the
/// directory is, how long it is and how many records it holds, from the
/// end-of-central-directory record and, when there is one, the zip64 end
/// record its locator points at.
package struct CentralDirectoryEnd: Equatable, Sendable {
    /// Where the central directory starts.
    package var offset: UInt64
    /// Its length in bytes: it ends where the end records begin.
    package var size: UInt64
    /// How many records it holds.
    package var count: UInt64
    /// Whether the counts and places come from a zip64 end record.
    package var isZip64: Bool
    /// The length of the comment that ends the file (reckon writes none).
    package var commentLength = 0

    /// Where the central directory ends and the end records begin.
    package var end: UInt64 { offset + size }

    /// Finds and reads the end records of `file`: the end record is the
    /// last 22 bytes, or before a comment that ends the file.
    package static func read(_ file: ZipFile) throws(ZipStructureError) -> CentralDirectoryEnd {
        guard file.size >= 22 else {
            throw ZipStructureError(words: "the file is \(counted(file.size, "byte")), too short to end with a zip's end record")
        }
        let tailLength = Int(min(file.size, 22 + 0xFFFF))
        let tailStart = file.size - UInt64(tailLength)
        let tail = try file.bytes(tailLength, at: tailStart, "the end record")
        guard
            let at = stride(from: tailLength - 22, through: 0, by: -1).first(where: {
                tail.hasSignature((5, 6), at: $0) && Int(tail.le16($0 + 20)) == tailLength - $0 - 22
            })
        else {
            throw ZipStructureError(words: "the file has no end-of-central-directory record where a zip ends, so it is cut short or is not a zip")
        }
        let endRecord = tailStart + UInt64(at)
        let disk = UInt32(tail.le16(at + 4))
        let directoryDisk = UInt32(tail.le16(at + 6))
        let onDisk = UInt64(tail.le16(at + 8))
        let count = UInt64(tail.le16(at + 10))
        let size = UInt64(tail.le32(at + 12))
        let offset = UInt64(tail.le32(at + 16))

        // A zip64 locator, when there is one, lies right before the end record.
        var result = CentralDirectoryEnd(offset: offset, size: size, count: count, isZip64: false)
        var directoryEnd = endRecord
        if endRecord >= 20, case let locator = try file.bytes(20, at: endRecord - 20, "the zip64 locator"), locator.hasSignature((6, 7), at: 0) {
            (result, directoryEnd) = try readZip64(
                file, locator: locator, endRecord: endRecord,
                fields: (disk: disk, directoryDisk: directoryDisk, onDisk: onDisk, count: count, size: size, offset: offset))
        } else {
            guard disk == 0, directoryDisk == 0 else {
                throw ZipStructureError(words: "the end record says the zip spans several disks; reckon writes a zip as one file")
            }
            guard onDisk == count else {
                throw ZipStructureError(words: "the end record counts \(counted(onDisk, "entry", "entries")) on this disk but \(count) in all")
            }
        }
        guard result.offset <= directoryEnd, result.size == directoryEnd - result.offset else {
            throw ZipStructureError(
                words: "the end record says the central directory is \(counted(result.size, "byte")) from byte \(result.offset), "
                    + "which does not end at byte \(directoryEnd), where the end records begin")
        }
        guard result.count <= result.size / 46 else {
            throw ZipStructureError(
                words:
                    "the end record counts \(counted(result.count, "entry", "entries")), more than a central directory of \(counted(result.size, "byte")) can hold"
            )
        }
        result.commentLength = tailLength - at - 22
        return result
    }

    /// Reads the zip64 end record that `locator` (the 20 bytes before the
    /// end record at `endRecord`) points at, and checks the end record's own
    /// `fields` against it. Gives the zip64 record's numbers and where the
    /// central directory must end: where the zip64 end record starts.
    private static func readZip64(
        _ file: ZipFile, locator: [UInt8], endRecord: UInt64,
        fields: (disk: UInt32, directoryDisk: UInt32, onDisk: UInt64, count: UInt64, size: UInt64, offset: UInt64)
    ) throws(ZipStructureError) -> (CentralDirectoryEnd, directoryEnd: UInt64) {
        let (disk, directoryDisk, onDisk, count, size, offset) = fields
        let locatorAt = endRecord - 20
        guard locator.le32(4) == 0, locator.le32(16) <= 1 else {
            throw ZipStructureError(words: "the zip64 locator says the zip spans several disks; reckon writes a zip as one file")
        }
        let recordAt = locator.le64(8)
        guard recordAt <= locatorAt, locatorAt - recordAt >= 56 else {
            throw ZipStructureError(
                words: "the zip64 locator points at byte \(recordAt), "
                    + "where no zip64 end record fits before the locator at byte \(locatorAt)")
        }
        let record = try file.bytes(56, at: recordAt, "the zip64 end record")
        guard record.hasSignature((6, 6), at: 0) else {
            throw ZipStructureError(words: "the zip64 locator points at byte \(recordAt), where there is no zip64 end record")
        }
        guard record.le64(4) == locatorAt - recordAt - 12 else {
            throw ZipStructureError(
                words: "the zip64 end record at byte \(recordAt) says it is \(counted(record.le64(4), "byte")) long, "
                    + "but it does not end where the zip64 locator starts, at byte \(locatorAt)")
        }
        guard record.le32(16) == 0, record.le32(20) == 0 else {
            throw ZipStructureError(words: "the zip64 end record says the zip spans several disks; reckon writes a zip as one file")
        }
        let result = CentralDirectoryEnd(offset: record.le64(48), size: record.le64(40), count: record.le64(32), isZip64: true)
        guard record.le64(24) == result.count else {
            throw ZipStructureError(
                words: "the zip64 end record counts \(counted(record.le64(24), "entry", "entries")) on this disk but \(result.count) in all")
        }
        // The end record's own fields hold the same numbers, or all ones where they are in the zip64 record.
        func agrees(_ value: UInt64, _ wide: UInt64, allOnes: UInt64) -> Bool { value == wide || value == allOnes }
        guard agrees(UInt64(disk), 0, allOnes: 0xFFFF), agrees(UInt64(directoryDisk), 0, allOnes: 0xFFFF) else {
            throw ZipStructureError(words: "the end record says the zip spans several disks; reckon writes a zip as one file")
        }
        guard agrees(onDisk, result.count, allOnes: 0xFFFF), agrees(count, result.count, allOnes: 0xFFFF) else {
            throw ZipStructureError(
                words: "the end record counts \(counted(count, "entry", "entries")), but the zip64 end record \(result.count)")
        }
        guard agrees(size, result.size, allOnes: 0xFFFF_FFFF) else {
            throw ZipStructureError(
                words: "the end record says the central directory is \(counted(size, "byte")), but the zip64 end record \(result.size)")
        }
        guard agrees(offset, result.offset, allOnes: 0xFFFF_FFFF) else {
            throw ZipStructureError(
                words: "the end record puts the central directory at byte \(offset), but the zip64 end record at byte \(result.offset)")
        }
        return (result, recordAt)
    }
}

/// One record of the central directory (APPNOTE 4.3.12): its fixed 46
/// bytes, then its name, extra field and comment.
package struct CentralRecord: Sendable {
    /// Where the record starts.
    package var position: UInt64
    package var versionMadeBy: UInt16
    package var versionNeeded: UInt16
    /// The general-purpose bit flags.
    package var flags: UInt16
    /// The compression method: 0 stored, 8 deflated.
    package var method: UInt16
    /// The MS-DOS time (low half) and date (high half).
    package var modified: UInt32
    package var crc32: UInt32
    /// The sizes, disk and offset as the fixed fields hold them: all ones
    /// means the value is in the zip64 field (`wide()`).
    package var compressedSize: UInt32
    package var uncompressedSize: UInt32
    package var diskStart: UInt16
    package var internalAttributes: UInt16
    package var externalAttributes: UInt32
    package var localHeaderOffset: UInt32
    /// The name's bytes, as written.
    package var name: [UInt8]
    package var extra: [UInt8]
    package var comment: [UInt8]

    /// The sizes, the disk and the local header's offset, each from the
    /// zip64 field where its fixed field is all ones (APPNOTE 4.5.3: in the
    /// order uncompressed size, compressed size, offset, disk).
    package func wide() throws(ZipStructureError) -> (compressedSize: UInt64, uncompressedSize: UInt64, localHeaderOffset: UInt64, diskStart: UInt32)
    {
        guard let fields = zipExtraFields(extra) else {
            throw ZipStructureError(words: "the zip's central directory gives this entry an extra field whose lengths do not add up")
        }
        var result = (UInt64(compressedSize), UInt64(uncompressedSize), UInt64(localHeaderOffset), UInt32(diskStart))
        let wanted =
            (uncompressedSize == .max ? 8 : 0) + (compressedSize == .max ? 8 : 0)
            + (localHeaderOffset == .max ? 8 : 0) + (diskStart == .max ? 4 : 0)
        guard wanted > 0 else { return result }
        guard let zip64 = fields.first(where: { $0.id == zip64FieldID }).map({ [UInt8]($0.data) }), zip64.count >= wanted else {
            throw ZipStructureError(
                words: "the zip's central directory says this entry's sizes or place are in a zip64 field, "
                    + "but it has no such field or too short a one")
        }
        var at = 0
        if uncompressedSize == .max {
            result.1 = zip64.le64(at)
            at += 8
        }
        if compressedSize == .max {
            result.0 = zip64.le64(at)
            at += 8
        }
        if localHeaderOffset == .max {
            result.2 = zip64.le64(at)
            at += 8
        }
        if diskStart == .max { result.3 = zip64.le32(at) }
        return result
    }

    /// Whether its extra field holds a zip64 field.
    package var hasZip64Field: Bool { zipExtraFields(extra)?.contains { $0.id == zip64FieldID } == true }

    /// Calls `body` with each record of the central directory `end`
    /// describes, in order. An error when a record is not where the one
    /// before it ends, runs past the directory's end, or the records do not
    /// fill the directory or number what the end record counts.
    package static func forEach(in file: ZipFile, _ end: CentralDirectoryEnd, _ body: (CentralRecord) -> Void) throws(ZipStructureError) {
        // Read in chunks of up to 1 MiB: a directory of 100,000 records is some 12 MB.
        var chunk: [UInt8] = []
        var chunkStart = end.offset
        var at = end.offset
        /// The next `count` bytes of the directory, from a chunk that holds them.
        func take(_ count: Int, _ what: @autoclosure () -> String) throws(ZipStructureError) -> ArraySlice<UInt8> {
            guard UInt64(count) <= end.end - at else { throw ZipStructureError(words: "\(what()) runs past the directory's end, at byte \(end.end)") }
            if at + UInt64(count) > chunkStart + UInt64(chunk.count) {
                chunk = try file.bytes(Int(min(max(UInt64(count), 1 << 20), end.end - at)), at: at, what())
                chunkStart = at
            }
            let from = Int(at - chunkStart)
            at += UInt64(count)
            return chunk[from..<(from + count)]
        }
        var number: UInt64 = 0
        while at < end.end {
            number += 1
            let position = at
            let what = "record \(number)"
            guard number <= end.count else {
                throw ZipStructureError(words: "it holds more records than the \(end.count) the end record counts")
            }
            let fixed = [UInt8](try take(46, what))
            guard fixed.hasSignature((1, 2), at: 0) else {
                throw ZipStructureError(
                    words: number == 1
                        ? "no record starts at byte \(position), where the end record puts it"
                        : "\(what) is not at byte \(position), where the one before it ends")
            }
            let name = [UInt8](try take(Int(fixed.le16(28)), what))
            let extra = [UInt8](try take(Int(fixed.le16(30)), what))
            let comment = [UInt8](try take(Int(fixed.le16(32)), what))
            body(
                CentralRecord(
                    position: position, versionMadeBy: fixed.le16(4), versionNeeded: fixed.le16(6), flags: fixed.le16(8),
                    method: fixed.le16(10), modified: fixed.le32(12), crc32: fixed.le32(16), compressedSize: fixed.le32(20),
                    uncompressedSize: fixed.le32(24), diskStart: fixed.le16(34), internalAttributes: fixed.le16(36),
                    externalAttributes: fixed.le32(38), localHeaderOffset: fixed.le32(42), name: name, extra: extra, comment: comment))
        }
        guard number == end.count else {
            throw ZipStructureError(words: "it holds \(number) records, but the end record counts \(end.count)")
        }
    }
}

/// An entry's local file header (APPNOTE 4.3.7): 30 bytes, then its name
/// and extra field; its data follows.
package struct LocalHeader {
    package var versionNeeded: UInt16
    package var flags: UInt16
    package var method: UInt16
    package var modified: UInt32
    package var crc32: UInt32
    /// The sizes, from the zip64 field where the fixed field is all ones.
    package var compressedSize: UInt64
    package var uncompressedSize: UInt64
    package var name: [UInt8]
    package var extra: [UInt8]
    /// Whether its extra field holds a zip64 field: then a data
    /// descriptor's sizes are 8 bytes each (APPNOTE 4.3.9.2).
    package var hasZip64Field: Bool
    /// Where the entry's data starts.
    package var dataOffset: UInt64

    /// Whether bit 3 is set: the CRC-32 and sizes follow the data, in a data
    /// descriptor, and the header's may be zero.
    package var sizesFollowData: Bool { flags & 0x0008 != 0 }

    /// Reads the local header at `offset`, which must end before `limit` (where the central directory starts).
    package static func read(at offset: UInt64, before limit: UInt64, in file: ZipFile) throws(ZipStructureError) -> LocalHeader {
        guard offset < limit, limit - offset >= 30 else { throw ZipStructureError(words: "no local header fits there, before the central directory") }
        // One read takes the fixed part and, as a rule, the name and extra field after it.
        let fixed = try file.bytes(Int(min(limit - offset, 30 + 480)), at: offset, "the local header")
        guard fixed.hasSignature((3, 4), at: 0) else { throw ZipStructureError(words: "there is no local header there") }
        let nameLength = Int(fixed.le16(26))
        let extraLength = Int(fixed.le16(28))
        guard UInt64(nameLength + extraLength) <= limit - offset - 30 else {
            throw ZipStructureError(words: "the local header there runs into the central directory")
        }
        let rest =
            fixed.count >= 30 + nameLength + extraLength
            ? [UInt8](fixed[30..<(30 + nameLength + extraLength)])
            : try file.bytes(nameLength + extraLength, at: offset + 30, "the local header")
        let extra = [UInt8](rest[nameLength...])
        var header = LocalHeader(
            versionNeeded: fixed.le16(4), flags: fixed.le16(6), method: fixed.le16(8), modified: fixed.le32(10),
            crc32: fixed.le32(14), compressedSize: UInt64(fixed.le32(18)), uncompressedSize: UInt64(fixed.le32(22)),
            name: [UInt8](rest[..<nameLength]), extra: extra, hasZip64Field: false,
            dataOffset: offset + 30 + UInt64(nameLength + extraLength))
        guard let fields = zipExtraFields(extra) else {
            throw ZipStructureError(words: "the extra field of the header there has lengths that do not add up")
        }
        // In a local header the zip64 field holds both sizes, uncompressed first (APPNOTE 4.5.3).
        if let zip64 = fields.first(where: { $0.id == zip64FieldID }).map({ [UInt8]($0.data) }) {
            header.hasZip64Field = true
            if header.uncompressedSize == 0xFFFF_FFFF, zip64.count >= 8 { header.uncompressedSize = zip64.le64(0) }
            if header.compressedSize == 0xFFFF_FFFF, zip64.count >= 16 { header.compressedSize = zip64.le64(8) }
        }
        return header
    }
}

/// The data descriptor after an entry's data (APPNOTE 4.3.9): its CRC-32
/// and sizes, after an optional signature.
package struct DataDescriptor {
    package var crc32: UInt32
    package var compressedSize: UInt64
    package var uncompressedSize: UInt64
    /// Its length in bytes, signature included.
    package var length: Int

    /// Reads the descriptor at `offset`, which must end by `limit`; its
    /// sizes are 8 bytes each when `wide`.
    package static func read(at offset: UInt64, wide: Bool, before limit: UInt64, in file: ZipFile) throws(ZipStructureError) -> DataDescriptor {
        let fields = wide ? 20 : 12
        guard offset <= limit, limit - offset >= UInt64(fields) else {
            throw ZipStructureError(words: "no data descriptor fits before the central directory")
        }
        let bytes = try file.bytes(Int(min(UInt64(fields + 4), limit - offset)), at: offset, "the data descriptor")
        let start = bytes.hasSignature((7, 8), at: 0) && bytes.count == fields + 4 ? 4 : 0
        return DataDescriptor(
            crc32: bytes.le32(start),
            compressedSize: wide ? bytes.le64(start + 4) : UInt64(bytes.le32(start + 4)),
            uncompressedSize: wide ? bytes.le64(start + 12) : UInt64(bytes.le32(start + 8)),
            length: start + fields)
    }
}

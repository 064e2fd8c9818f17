extension ExportVerifier {
    /// The Unix mode reckon gives every entry: a regular file, 0644.
    static let writtenMode: UInt32 = 0o100644

    /// An entry's central record and local header against the fields
    /// reckon writes (`ZipContainer`), in words where they differ: made by
    /// zip 6.3 on Unix; version 2.0 needed (4.5 with zip64); no flags but
    /// UTF-8 for a name beyond ASCII; deflated; no internal attributes;
    /// mode 0644, a regular file; no comment; no extra field but zip64's,
    /// holding just what does not fit its fixed field. `size`,
    /// `compressedSize` and `offset` are the record's, zip64's where it
    /// keeps them there. A field the two headers disagree on is left to
    /// `headerProblems`, which says so.
    static func layoutProblems(_ record: CentralRecord, _ header: LocalHeader, size: UInt64, compressedSize: UInt64, offset: UInt64)
        -> [String]
    {
        var problems: [String] = []
        if record.method != 8 && header.method == record.method {
            problems.append("is \(methodWords(record.method)), which reckon does not write")
        }
        if record.versionMadeBy != 3 << 8 | 63 {
            problems.append("\(says) says this entry was made by \(madeByWords(record.versionMadeBy)), but reckon writes zip 6.3 on Unix")
        }
        let large = size >= 0xFFFF_FFFF || compressedSize >= 0xFFFF_FFFF
        let version: UInt16 = large || offset >= 0xFFFF_FFFF ? 45 : 20
        // Another method needs another version: its words are enough.
        if record.method == 8 && header.versionNeeded == record.versionNeeded && record.versionNeeded != version {
            problems.append(
                "\(says) says this entry needs zip version \(versionWords(record.versionNeeded)) to extract, "
                    + "but reckon writes \(versionWords(version)) for it")
        }
        let flags: UInt16 = record.name.allSatisfy { $0 < 0x80 } ? 0 : 0x0800
        // A name beyond ASCII not marked as UTF-8 has words of its own (`headerProblems`).
        let otherFlags = (record.flags ^ flags) & (flags == 0x0800 ? ~0x0800 : 0xFFFF)
        if header.flags == record.flags && otherFlags != 0 {
            problems.append(
                "\(says) gives this entry the flags \(hex(record.flags)), but reckon writes \(hex(flags)) for it"
                    + " (they differ in: \(flagWords(otherFlags)))")
        }
        if record.internalAttributes != 0 {
            problems.append("\(says) gives this entry the internal attributes \(hex(record.internalAttributes)), but reckon writes none")
        }
        let mode = record.externalAttributes >> 16
        if mode & 0o170000 != 0o100000 {
            problems.append(
                "\(says) makes this entry \(kindWords(mode)) (mode \(String(mode, radix: 8))), not a regular file; bsdtar would not extract it as one"
            )
        } else if mode != writtenMode {
            problems.append("\(says) gives this entry mode \(String(mode & 0o7777, radix: 8)), but reckon writes 644")
        }
        if record.externalAttributes & 0xFFFF != 0 {
            problems.append(
                "\(says) gives this entry the MS-DOS attributes \(hex(UInt16(record.externalAttributes & 0xFFFF))), but reckon writes none")
        }
        if !record.comment.isEmpty { problems.append("\(says) gives this entry a comment, which reckon never writes") }
        // Extra fields that differ between the headers but for zip64's are named by `headerProblems`.
        guard withoutZip64(record.extra) == withoutZip64(header.extra) else { return problems }
        let central = zip64Field([size, compressedSize, offset].filter { $0 >= 0xFFFF_FFFF })
        if record.extra != central {
            problems.append("\(says) gives this entry extra fields other than reckon writes (\(extraWords(record.extra)))")
        }
        if header.extra != zip64Field(large ? [size, compressedSize] : []) {
            problems.append("its own header gives it extra fields other than reckon writes (\(extraWords(header.extra)))")
        }
        return problems
    }

    /// The zip64 field holding `values` (APPNOTE 4.5.3), or nothing when there are none.
    private static func zip64Field(_ values: [UInt64]) -> [UInt8] {
        guard !values.isEmpty else { return [] }
        var bytes: [UInt8] = [0x01, 0x00, UInt8(8 * values.count), 0x00]
        for value in values { bytes += (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        return bytes
    }

    /// The ids of an extra field's parts, as `ids 0x5455, 0x7875`, or what is wrong with it.
    private static func extraWords(_ extra: [UInt8]) -> String {
        guard let fields = zipExtraFields(extra) else { return "their lengths do not add up" }
        guard !fields.isEmpty else { return "none" }
        return (fields.count == 1 ? "id " : "ids ") + fields.map { hex($0.id) }.joined(separator: ", ")
    }

    /// Who made an entry (APPNOTE 4.4.2): `zip 2.0 on MS-DOS`.
    private static func madeByWords(_ value: UInt16) -> String {
        let systems: [UInt16: String] = [0: "MS-DOS", 3: "Unix", 10: "Windows NTFS", 19: "macOS"]
        return "zip \(versionWords(value & 0xFF)) on " + (systems[value >> 8] ?? "system \(value >> 8)")
    }
}

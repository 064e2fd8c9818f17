/// One Markdown file per memo, in the manner of Joplin's export: front
/// matter with keys in a fixed order and only those that have values, tags
/// sorted, then the body.
package enum MarkdownExport {
    /// The renderer's version, kept in a run's Markdown index: a change to
    /// what `render` or `fileNames` make must raise it, so that no file of
    /// the earlier renderer is reused.
    package static let version: UInt64 = 2

    package static func render(_ memo: Memo) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + (memo.body?.utf8.count ?? 0))
        write(memo) { bytes.append(contentsOf: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes what `render` makes, handing the bytes to `out` in order: the
    /// front matter, then the body as it is (never copied), then a last line
    /// break when the body lacks one.
    static func write(_ memo: Memo, to out: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var text = "---\n"
        if let title = memo.title, !title.isEmpty { text += "title: " + yamlQuoted(title) + "\n" }
        text += "id: \(memo.id)\n"
        if let created = memo.createdAt { text += "created: " + created.iso8601 + "\n" }
        text += "updated: " + memo.modifiedAt.iso8601 + "\n"
        if let archived = memo.archivedAt { text += "archived: " + archived.iso8601 + "\n" }
        let tags = memo.tags.sorted()
        if !tags.isEmpty {
            text += "tags:\n"
            for tag in tags { text += "  - " + yamlQuoted(tag) + "\n" }
        }
        text += "---\n\n"
        try text.withUTF8 { try out(UnsafeRawBufferPointer($0)) }
        guard var body = memo.body, !body.isEmpty else { return }
        try body.withUTF8 { try out(UnsafeRawBufferPointer($0)) }
        if body.utf8.last != UInt8(ascii: "\n") { try [UInt8(ascii: "\n")].withUnsafeBytes { try out($0) } }
    }

    /// A YAML double-quoted scalar: quotes, backslashes and control
    /// characters escaped, so any title stays one value.
    package static func yamlQuoted(_ text: String) -> String {
        /// A control character (general category Cc), or a line or paragraph separator, or a byte order mark.
        func escaped(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}" || scalar == "\u{FEFF}"
        }
        guard text.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\\" || escaped($0) }) else { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if escaped(scalar) {
                    out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// `<date>-<slug>-<short id>.md`. The slug keeps letters and digits of
    /// any script, in small letters, with every other run of characters made
    /// one `-`; an empty slug is `untitled`. The name never holds `/`, `..`,
    /// a control character or a reserved device name, and the id part keeps
    /// two memos with one title and one date apart: the short name ends in
    /// the id's first 8 letters, the long one (for a memo whose short name an
    /// earlier memo took) in the whole id.
    package static func fileNames(_ memo: Memo) -> (short: String, long: String) {
        fileNames(stem: "\((memo.createdAt ?? memo.modifiedAt).iso8601.prefix(10))-\(slug(memo.title ?? ""))-", id: memo.id.value)
    }

    /// The two names made of a name's first part (`<date>-<slug>-`) and the id, as spelled.
    static func fileNames(stem: String, id: String) -> (short: String, long: String) {
        (stem + id.prefix(8) + ".md", stem + id + ".md")
    }

    static func slug(_ title: String) -> String {
        title.utf8.allSatisfy { $0 < 0x80 } ? asciiSlug(title) : unicodeSlug(title)
    }

    /// `slug` for a title of ASCII letters alone, over its bytes: what
    /// `unicodeSlug` makes of it (the tests hold both to the same names).
    package static func asciiSlug(_ title: String) -> String {
        var slug: [UInt8] = []
        var pendingDash = false
        for byte in title.utf8 {
            let lower = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            if (0x61...0x7A).contains(lower) || (0x30...0x39).contains(lower) {
                if pendingDash && !slug.isEmpty { slug.append(UInt8(ascii: "-")) }
                pendingDash = false
                guard slug.count + 1 <= 120 else { break }
                slug.append(lower)
            } else {
                pendingDash = true
            }
        }
        return slug.isEmpty ? "untitled" : String(decoding: slug, as: UTF8.self)
    }

    package static func unicodeSlug(_ title: String) -> String {
        var slug = ""
        var pendingDash = false
        for character in title.precomposedStringWithCanonicalMapping.lowercased() {
            // A letter or digit with the marks that belong to it ("i̇", "स्ते").
            func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
                (scalar.properties.isAlphabetic || scalar.properties.numericType != nil) && scalar.properties.generalCategory != .control
            }
            func isMark(_ scalar: Unicode.Scalar) -> Bool {
                [.nonspacingMark, .spacingMark, .enclosingMark].contains(scalar.properties.generalCategory)
            }
            let scalars = character.unicodeScalars
            let keep = isLetterOrDigit(scalars.first!) && scalars.dropFirst().allSatisfy { isLetterOrDigit($0) || isMark($0) }
            if keep {
                if pendingDash && !slug.isEmpty { slug += "-" }
                pendingDash = false
                guard slug.utf8.count + character.utf8.count <= 120 else { break }
                slug.append(character)
            } else {
                pendingDash = true
            }
        }
        return slug.isEmpty ? "untitled" : slug
    }
}

/// One Markdown file per memo, in the manner of Joplin's export: front
/// matter with keys in a fixed order and only those that have values, tags
/// sorted, then the body.
public enum MarkdownExport {
    /// The renderer's version, kept in a run's Markdown index: a change to
    /// what `render` or `fileNames` make must raise it, so that no file of
    /// the earlier renderer is reused.
    package static let version: UInt64 = 1

    public static func render(_ memo: Memo) -> String {
        var lines = ["---"]
        if let title = memo.title, !title.isEmpty { lines.append("title: \(yamlQuoted(title))") }
        lines.append("id: \(memo.id)")
        if let created = memo.createdAt { lines.append("created: \(created.iso8601)") }
        lines.append("updated: \(memo.modifiedAt.iso8601)")
        if let archived = memo.archivedAt { lines.append("archived: \(archived.iso8601)") }
        let tags = memo.tags.sorted()
        if !tags.isEmpty {
            lines.append("tags:")
            lines += tags.map { "  - \(yamlQuoted($0))" }
        }
        lines.append("---")
        lines.append("")
        var text = lines.joined(separator: "\n") + "\n"
        let body = memo.body ?? ""
        text += body
        if !body.isEmpty && !body.hasSuffix("\n") { text += "\n" }
        return text
    }

    /// A YAML double-quoted scalar: quotes, backslashes and control
    /// characters escaped, so any title stays one value.
    static func yamlQuoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" || scalar == "\u{FEFF}" {
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
    public static func fileNames(_ memo: Memo) -> (short: String, long: String) {
        let stem = "\((memo.createdAt ?? memo.modifiedAt).iso8601.prefix(10))-\(slug(memo.title ?? ""))-"
        return (stem + memo.id.value.prefix(8) + ".md", stem + memo.id.value + ".md")
    }

    static func slug(_ title: String) -> String {
        var slug = ""
        var pendingDash = false
        for character in title.precomposedStringWithCanonicalMapping.lowercased() {
            let keep = character.unicodeScalars.allSatisfy { scalar in
                (scalar.properties.isAlphabetic || scalar.properties.numericType != nil) && scalar.properties.generalCategory != .control
            }
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

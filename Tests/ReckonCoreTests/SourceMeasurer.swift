/// Measures the function-like declarations of one Swift source file: every
/// `func`, `init`, `deinit`, `subscript` and `var` with an accessor block that
/// is not inside another one's body, from the line of its keyword to the line
/// of its closing brace. Braces only count where they are code: string
/// literals (`"…"`, `"""…"""`, raw `#"…"#`, with their interpolations),
/// comments (`//`, nested `/* */`), regex literals and backtick names are read
/// as what they are. A closure or a nested function lies within its parent's
/// body, so it counts toward the parent and is not measured on its own.
struct SourceMeasurer {
    /// One declaration that has a body, and how many lines it spans.
    struct Measured: Equatable, CustomStringConvertible {
        var name: String
        var line: Int
        var lines: Int

        var description: String { "\(name)@\(line):\(lines)" }
    }

    /// What a piece of code is, as far as counting braces needs.
    enum Kind: Equatable {
        case word
        case punctuation
        case literal
    }

    /// One piece of code and the line it starts on.
    struct Token {
        var kind: Kind
        var text: String
        var line: Int
    }

    /// The keywords that open a function-like declaration.
    static let declarationKeywords: Set<String> = ["func", "init", "deinit", "subscript", "var"]

    /// Words that begin the next declaration: met while looking for a body,
    /// they mean the declaration before them had none.
    static let nextDeclarationWords: Set<String> = [
        "func", "init", "deinit", "subscript", "var", "let", "case", "struct", "class", "enum",
        "protocol", "extension", "typealias", "associatedtype", "actor", "import", "operator"
    ]

    /// Every measured declaration of `source`, in the order they appear.
    static func measure(_ source: String) -> [Measured] {
        var lexer = Lexer(bytes: Array(source.utf8))
        lexer.lexCode(insideInterpolation: false)
        return declarations(in: lexer.tokens)
    }

    /// The outermost function-like declarations among `tokens` that have a body.
    static func declarations(in tokens: [Token]) -> [Measured] {
        var found: [Measured] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            let afterDot = index > 0 && tokens[index - 1].text == "."
            guard token.kind == .word, declarationKeywords.contains(token.text), !afterDot,
                let open = bodyStart(after: index, in: tokens)
            else {
                index += 1
                continue
            }
            guard let close = matchingBrace(of: open, in: tokens) else { break }
            found.append(Measured(name: name(at: index, in: tokens), line: token.line, lines: tokens[close].line - token.line + 1))
            index = close + 1
        }
        return found
    }

    /// The index of the `{` that opens the body of the declaration whose
    /// keyword is at `keyword`, or nil when it has none (a requirement in a
    /// protocol, a stored property).
    static func bodyStart(after keyword: Int, in tokens: [Token]) -> Int? {
        var depth = 0
        var index = keyword + 1
        let isProperty = tokens[keyword].text == "var"
        while index < tokens.count {
            let token = tokens[index]
            switch (token.kind, token.text) {
            case (.punctuation, "("), (.punctuation, "["): depth += 1
            case (.punctuation, ")"), (.punctuation, "]"): depth -= 1
            case (.punctuation, "{") where depth == 0: return index
            case (.punctuation, "}") where depth == 0: return nil
            case (.punctuation, "=") where depth == 0 && isProperty: return nil
            case (.word, let word) where depth == 0 && nextDeclarationWords.contains(word): return nil
            default: break
            }
            index += 1
        }
        return nil
    }

    /// The index of the `}` that closes the `{` at `open`.
    static func matchingBrace(of open: Int, in tokens: [Token]) -> Int? {
        var depth = 0
        for index in open..<tokens.count where tokens[index].kind == .punctuation {
            if tokens[index].text == "{" { depth += 1 }
            if tokens[index].text == "}" {
                depth -= 1
                if depth == 0 { return index }
            }
        }
        return nil
    }

    /// How a declaration is named in a report: `init`, `subscript`, or the
    /// word after `func` or `var`.
    static func name(at keyword: Int, in tokens: [Token]) -> String {
        let word = tokens[keyword].text
        guard word == "func" || word == "var", keyword + 1 < tokens.count else { return word }
        return tokens[keyword + 1].text
    }
}

extension SourceMeasurer {
    /// Reads Swift source into tokens, keeping only what is code.
    struct Lexer {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var tokens: [Token] = []

        static let quote = UInt8(ascii: "\"")
        static let hash = UInt8(ascii: "#")
        static let slash = UInt8(ascii: "/")
        static let backslash = UInt8(ascii: "\\")
        static let newline = UInt8(ascii: "\n")

        func byte(at offset: Int) -> UInt8? {
            index + offset < bytes.count ? bytes[index + offset] : nil
        }

        func starts(with text: String) -> Bool {
            let wanted = Array(text.utf8)
            return index + wanted.count <= bytes.count && Array(bytes[index..<index + wanted.count]) == wanted
        }

        /// Moves past one byte, counting lines.
        mutating func advance() {
            if bytes[index] == Self.newline { line += 1 }
            index += 1
        }

        /// Reads code until the end, or, inside an interpolation, until the
        /// `)` that closes it.
        mutating func lexCode(insideInterpolation: Bool) {
            var parens = 0
            while index < bytes.count {
                let byte = bytes[index]
                if starts(with: "//") {
                    while index < bytes.count, bytes[index] != Self.newline { advance() }
                } else if starts(with: "/*") {
                    skipBlockComment()
                } else if byte == Self.quote || (byte == Self.hash && opensRawLiteral()) {
                    lexLiteral()
                } else if byte == Self.slash && opensRegex() {
                    skipRegex()
                } else if byte == UInt8(ascii: "`") {
                    lexBacktickName()
                } else if isWordByte(byte) {
                    lexWord()
                } else if byte == UInt8(ascii: ")") && insideInterpolation && parens == 0 {
                    advance()
                    return
                } else {
                    if byte == UInt8(ascii: "(") { parens += 1 }
                    if byte == UInt8(ascii: ")") { parens -= 1 }
                    if !(byte == UInt8(ascii: " ") || byte == Self.newline || byte == UInt8(ascii: "\t")) {
                        tokens.append(Token(kind: .punctuation, text: String(UnicodeScalar(byte)), line: line))
                    }
                    advance()
                }
            }
        }

        func isWordByte(_ byte: UInt8) -> Bool {
            byte >= 0x80 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte == UInt8(ascii: "@") || byte == Self.hash
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }

        mutating func lexWord() {
            let start = index
            let startLine = line
            while index < bytes.count, isWordByte(bytes[index]) { advance() }
            tokens.append(Token(kind: .word, text: String(decoding: bytes[start..<index], as: UTF8.self), line: startLine))
        }

        mutating func lexBacktickName() {
            let startLine = line
            advance()
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "`") { advance() }
            tokens.append(Token(kind: .word, text: String(decoding: bytes[start..<index], as: UTF8.self), line: startLine))
            if index < bytes.count { advance() }
        }

        /// Swift block comments nest.
        mutating func skipBlockComment() {
            var depth = 0
            while index < bytes.count {
                if starts(with: "/*") {
                    depth += 1
                    advance()
                } else if starts(with: "*/") {
                    depth -= 1
                    advance()
                    if depth == 0 {
                        advance()
                        return
                    }
                }
                advance()
            }
        }

        /// `#` opens a raw string or an extended regex when only more `#`
        /// stand between it and a `"` or a `/`.
        func opensRawLiteral() -> Bool {
            var offset = 0
            while byte(at: offset) == Self.hash { offset += 1 }
            return byte(at: offset) == Self.quote || byte(at: offset) == Self.slash
        }

        /// A `/` starts a bare regex literal where an operand is expected and
        /// no space follows it (Swift's own rule keeps `a / b` a division).
        func opensRegex() -> Bool {
            guard let next = byte(at: 1), ![UInt8(ascii: " "), Self.newline, Self.slash, UInt8(ascii: "*"), UInt8(ascii: "=")].contains(next) else {
                return false
            }
            guard let previous = tokens.last else { return true }
            if previous.kind == .word { return ["return", "case", "in", "where", "of"].contains(previous.text) }
            return ["(", ",", ":", "=", "[", "{", "!", "&", "|"].contains(previous.text)
        }

        mutating func skipRegex() {
            let startLine = line
            advance()
            while index < bytes.count, bytes[index] != Self.slash, bytes[index] != Self.newline {
                if bytes[index] == Self.backslash { advance() }
                if index < bytes.count { advance() }
            }
            if index < bytes.count { advance() }
            tokens.append(Token(kind: .literal, text: "regex", line: startLine))
        }

        /// Reads a string literal (plain, multi-line or raw) or an extended
        /// regex `#/…/#`, lexing the code of each interpolation in it.
        mutating func lexLiteral() {
            let startLine = line
            var hashes = 0
            while bytes[index] == Self.hash {
                hashes += 1
                advance()
            }
            let closer: [UInt8]
            if bytes[index] == Self.slash {
                closer = [Self.slash]
                advance()
            } else if starts(with: "\"\"\"") {
                closer = Array("\"\"\"".utf8)
                for _ in 0..<3 { advance() }
            } else {
                closer = [Self.quote]
                advance()
            }
            let end = closer + Array(repeating: Self.hash, count: hashes)
            let escape = [Self.backslash] + Array(repeating: Self.hash, count: hashes)
            while index < bytes.count {
                if closer != [Self.slash], bytes[index...].starts(with: escape) {
                    for _ in escape { advance() }
                    if byte(at: 0) == UInt8(ascii: "(") {
                        advance()
                        lexCode(insideInterpolation: true)
                    } else if index < bytes.count {
                        advance()
                    }
                } else if bytes[index...].starts(with: end) {
                    for _ in end { advance() }
                    break
                } else {
                    advance()
                }
            }
            tokens.append(Token(kind: .literal, text: "literal", line: startLine))
        }
    }
}

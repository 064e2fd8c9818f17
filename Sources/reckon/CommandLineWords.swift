import Foundation
import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// The command line's words as the shell gave them. Swift's
/// `CommandLine.arguments` repairs a word that is not UTF-8 (each such byte
/// becomes U+FFFD), so a folder named with one could not be named at all;
/// these are read from `argv` itself.
struct CommandLineWords {
    /// Each word as text; a word that is not UTF-8 with each such byte shown as `\x{e9}`.
    var words: [String]
    /// The bytes of each word that is not UTF-8, by the text that stands for it in `words`.
    var notUTF8: [String: [UInt8]] = [:]

    /// The words of this process's command line, after its own name.
    static var current: CommandLineWords {
        CommandLineWords(
            (1..<Int(CommandLine.argc)).map { index in
                let word = CommandLine.unsafeArgv[index]!
                return Array(UnsafeRawBufferPointer(start: word, count: strlen(word)))
            })
    }

    init(_ words: [[UInt8]]) {
        var typed: Set<String> = []
        var notUTF8: [String: [UInt8]] = [:]
        self.words = words.map { bytes in
            if let text = String(validating: bytes, as: UTF8.self) {
                typed.insert(text)
                return text
            }
            let shown = displayName(bytes)
            notUTF8[shown] = bytes
            return shown
        }
        self.notUTF8 = notUTF8
        lookalike = notUTF8.keys.sorted().first(where: typed.contains)
    }

    /// A UTF-8 word spelled just as the text shown for a word that is not
    /// (`drive\x{e9}` typed, and `drive` with the byte 0xE9): the two cannot be told apart.
    private(set) var lookalike: String?
}

/// Where a side named by `bytes` (a path that is not UTF-8) is, as a path
/// the kernel opens and a Swift string can hold: the folder that holds it,
/// or the folder itself when its own name is not UTF-8, opened once for
/// the whole run and named `/proc/self/fd/N`. Nil when that folder cannot be
/// opened (a missing path), or the path's own name is not UTF-8 and it is
/// not a folder; `whyNot` then says what it is.
func reachablePath(_ bytes: [UInt8]) -> (path: String?, whyNot: FileKind?) {
    var whole = bytes
    while whole.count > 1 && whole.last == UInt8(ascii: "/") { whole.removeLast() }
    let slash = whole.lastIndex(of: UInt8(ascii: "/"))
    let name = Array(whole[(slash.map { $0 + 1 } ?? 0)...])
    let folder = slash.map { $0 == 0 ? [UInt8(ascii: "/")] : Array(whole[..<$0]) } ?? [UInt8(ascii: ".")]
    if let name = String(validating: name, as: UTF8.self) {
        // Only the folders above are not UTF-8: the kernel walks to the last name as it would.
        guard let fd = openPath(folder, O_DIRECTORY) else { return (nil, nil) }
        return ("/proc/self/fd/\(fd)/" + name, nil)
    }
    let kind = FileKind(bytes: whole)
    guard kind == .directory, let fd = openPath(whole, O_DIRECTORY | O_NOFOLLOW) else { return (nil, kind) }
    // `/.` names the folder itself, so that a link in its place is never followed.
    return ("/proc/self/fd/\(fd)/.", nil)
}

/// An `O_PATH` descriptor of what `bytes` names (reached, not read: a
/// folder that may only be searched opens too), kept open until reckon exits.
private func openPath(_ bytes: [UInt8], _ flags: Int32) -> Int32? {
    let pathOnly: Int32 = 0o1000_0000  // Linux's O_PATH, which Swift's Glibc module leaves out
    let fd = (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { open($0.baseAddress!, pathOnly | O_CLOEXEC | flags) }
    return fd < 0 ? nil : fd
}

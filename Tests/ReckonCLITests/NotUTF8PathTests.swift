import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A side named on the command line by a path that is not UTF-8 (bash's
/// `drive$'\xe9'`) is read by its bytes, and shown with `\x{e9}`.
@Suite struct NotUTF8PathTests {
    /// `drive` and the byte 0xE9, which is not UTF-8 on its own.
    static let drive = Array("drive".utf8) + [0xE9]

    /// A scratch folder holding `Samples/in-sync/drive` as `drive\xe9`, and the device beside it.
    func folderWithSides() throws -> URL {
        let folder = scratchFolder("not-utf8")
        try FileManager.default.copyItem(
            at: packageRoot.appendingPathComponent("Samples/in-sync/drive"), to: folder.appendingPathComponent("plain"))
        try FileManager.default.copyItem(
            at: packageRoot.appendingPathComponent("Samples/in-sync/device"), to: folder.appendingPathComponent("device"))
        try renameToBytes(folder.appendingPathComponent("plain"), folder, Self.drive)
        return folder
    }

    @Test func countsReadsAFolderByItsBytes() throws {
        let folder = try folderWithSides()
        let result = try runBytes([Array("counts".utf8), Self.drive], in: folder)
        #expect(result.code == 0, "\(result.stderr)")
        #expect(result.stdout == "Memos in drive\\x{e9}\n  Active    2\n  Archived  1\n")
        let json = try runBytes([Array("counts".utf8), Array("--json".utf8), Self.drive], in: folder)
        #expect(json.stdout.contains(#""path" : "drive\\x{e9}""#), "\(json.stdout)")
    }

    @Test func reconcileComparesAndShowsTheBytes() throws {
        let folder = try folderWithSides()
        let result = try runBytes(
            ["reconcile", "--local", "device", "--remote"].map { Array($0.utf8) } + [Self.drive] + ["--out", "reports"].map { Array($0.utf8) },
            in: folder)
        #expect(result.code == 0, "\(result.stderr)")
        #expect(result.stdout.contains("agree: every memo is the same on each side"), "\(result.stdout)")
        let page = try read(folder.appendingPathComponent("reports/report.md"))
        #expect(page.contains("| Google Drive | `drive\\x{e9}` | ok |"), "\(page)")
        // Nothing says where the folder was reached from, nor a byte replaced by U+FFFD.
        for name in ["report.md", "report.html", "report.json", "combined.txt"] {
            let text = try read(folder.appendingPathComponent("reports/" + name))
            #expect(!text.contains("/proc/self") && !text.contains("\u{FFFD}"), "\(name)")
        }
        // `--local=PATH` takes the bytes after the `=`.
        let inline = try runBytes([Array("reconcile".utf8), Array("--local=".utf8) + Self.drive, Array("--remote".utf8), Self.drive], in: folder)
        #expect(inline.code == 0, "\(inline.stderr)")
    }

    @Test func aDamagedFileIsNamedUnderTheBytes() throws {
        let folder = try folderWithSides()
        let memos = folder.appendingPathComponent("device/60dMemo/memos")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: memos.path).sorted().first)
        try Data("{broken".utf8).write(to: memos.appendingPathComponent(name))
        try renameToBytes(folder.appendingPathComponent("device"), folder, Array("caf".utf8) + [0xE9])
        // The folder above the last name is not UTF-8 here.
        let result = try runBytes(
            [Array("reconcile".utf8), Array("--local".utf8), Array("caf".utf8) + [0xE9], Array("--remote".utf8), Self.drive], in: folder)
        #expect(result.code == 2)
        #expect(result.stdout.contains("caf\\x{e9}/60dMemo/memos/\(name)"), "\(result.stdout)")
    }

    @Test func exportWritesTheMemosOfTheFolder() throws {
        let folder = try folderWithSides()
        let result = try runBytes([Array("export".utf8), Self.drive, Array("--out".utf8), Array("exported".utf8)], in: folder)
        #expect(result.code == 0, "\(result.stderr)")
        let manifest = try read(folder.appendingPathComponent("exported/manifest.json"))
        #expect(!manifest.contains("/proc/self") && !manifest.contains("\u{FFFD}"))
        let exported = try json(read(folder.appendingPathComponent("exported/memos.json")))
        // The sample holds 2 active memos and 1 archived, which an export leaves out by default.
        #expect((exported["memos"] as? [Any])?.count == 2, "\(exported)")
        let verified = try runBytes(
            [Array("verify".utf8), Array("exported".utf8), Array("--against".utf8), Self.drive], in: folder)
        #expect(verified.code == 0, "\(verified.stdout)\(verified.stderr)")
    }

    @Test func whatCannotBeReadIsSaidWithTheBytes() throws {
        let folder = try folderWithSides()
        let missing = try runBytes([Array("counts".utf8), Array("nowhere".utf8) + [0xE9]], in: folder)
        #expect(missing.code == 2)
        #expect(missing.stderr == "error: nowhere\\x{e9}: the folder does not exist\n")
        // An output folder is written by name, and only UTF-8 names can be.
        let out = try runBytes([Array("export".utf8), Self.drive, Array("--out".utf8), Array("out".utf8) + [0xE9]], in: folder)
        #expect(out.code == 64)
        #expect(out.stderr.hasPrefix("Error: The value 'out\\x{e9}' for '--out <dir>' is not UTF-8;"), "\(out.stderr)")
        // A side whose own name is not UTF-8 can only be a folder.
        try Data("x".utf8).write(to: folder.appendingPathComponent("file"))
        try renameToBytes(folder.appendingPathComponent("file"), folder, Array("file".utf8) + [0xE9])
        let file = try runBytes([Array("counts".utf8), Array("file".utf8) + [0xE9]], in: folder)
        #expect(file.code == 64)
        #expect(file.stderr.hasPrefix("Error: file\\x{e9} is a file; a side whose own name is not UTF-8 can only be a folder\n"), "\(file.stderr)")
        // Typed as its escape and given as bytes at once, the two could not be told apart.
        let both = try runBytes(
            [Array("reconcile".utf8), Array("--local".utf8), Self.drive, Array("--remote".utf8), Array("drive\\x{e9}".utf8)], in: folder)
        #expect(both.code == 64)
        #expect(both.stderr.hasPrefix("Error: 'drive\\x{e9}' is typed as it is and is also how another word's bytes"), "\(both.stderr)")
    }
}

/// Renames `url` to the name `bytes` in `folder`: Foundation names files by strings, which cannot hold those bytes.
func renameToBytes(_ url: URL, _ folder: URL, _ bytes: [UInt8]) throws {
    let target = Array(folder.path.utf8) + [UInt8(ascii: "/")] + bytes
    let done = cString(target).withUnsafeBufferPointer { rename(url.path, $0.baseAddress!) }
    guard done == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
}

private func cString(_ bytes: [UInt8]) -> [CChar] { bytes.map { CChar(bitPattern: $0) } + [0] }

/// Runs the built binary in `folder` with `arguments` given as bytes, which
/// need not be UTF-8 (Foundation's `Process` takes strings), through
/// `posix_spawn`; its output goes to files, so no pipe can fill.
func runBytes(_ arguments: [[UInt8]], in folder: URL) throws -> RunResult {
    let output = scratchFolder("bytes-run").appendingPathComponent("output").path
    let script = #"cd "$1" && shift && exec "$@" >"$0.out" 2>"$0.err" </dev/null"#
    let words = ["/bin/sh", "-c", script, output, folder.path, reckonBinary.path].map { Array($0.utf8) } + arguments
    let copies = words.map { bytes in cString(bytes).withUnsafeBufferPointer { strdup($0.baseAddress!) } }
    defer { for copy in copies { free(copy) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, copies + [nil], environ)
    guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned)!) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // WEXITSTATUS, which Swift does not import: the code is the second byte.
    return RunResult(
        code: (status >> 8) & 0xFF, stdout: try read(URL(fileURLWithPath: output + ".out")),
        stderr: try read(URL(fileURLWithPath: output + ".err")))
}

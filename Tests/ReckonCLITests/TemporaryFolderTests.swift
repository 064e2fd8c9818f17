import Foundation
import TestSupport
import Testing

/// reckon copies a store into a private folder under `$TMPDIR`; when that
/// cannot be made, the error names TMPDIR and its value, not a bare path.
@Suite struct TemporaryFolderTests {
    @Test(arguments: ["missing", "file"])
    func anUnusableTMPDIRIsNamed(_ what: String) throws {
        let folder = scratchFolder("tmpdir")
        let tmp = folder.appendingPathComponent("tmp")
        if what == "file" { try Data("x".utf8).write(to: tmp) }
        let result = try reckon("counts", "Samples/store/default.store", environment: ["TMPDIR": tmp.path])
        #expect(result.code == 2)
        let why = what == "file" ? "Not a directory" : "No such file or directory"
        #expect(
            result.stderr == "error: Samples/store/default.store: cannot write \(tmp.path): cannot make a private folder there: \(why); "
                + "the folder is TMPDIR's (TMPDIR=\(tmp.path)): set TMPDIR to a folder you can write in, or unset it to use /tmp\n",
            "\(result.stderr)")
    }
}

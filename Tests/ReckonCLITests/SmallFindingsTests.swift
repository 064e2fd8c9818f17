import Foundation
import ReckonCore
import Testing

/// The small findings of the unattended-runs issue: names matched whole,
/// paths named from the current folder.
@Suite struct SmallFindingsTests {
    /// A name is matched whole: a newline at its end (which a regex's `$` lets through) is refused.
    @Test(arguments: [
        (
            #"{"local": {"path": "device"}, "remotes": [{"name": "drive\n", "path": "drive"}]}"#,
            #"p.json: 'remotes[0].name' must be 1 to 32 small letters, digits, '-' or '_', starting with a letter or digit, found 'drive\u{a}'"#
        ),
        (
            #"{"local": {"name": "device", "kind": "store", "path": "s.store", "model": {"attributes": {"title": "ZTITLE\n"}}}, "remotes": [{"path": "drive"}]}"#,
            #"p.json: 'local.model.attributes.title' must be an attribute's name (a letter, then letters, digits or '_'), found 'ZTITLE\u{a}'"#
        )
    ])
    func aNameEndingInANewlineIsRefused(definition: String, message: String) throws {
        let folder = temporaryFolder()
        try Data(definition.utf8).write(to: folder.appendingPathComponent("p.json"))
        let result = try runArray(["validate", "p.json"], in: folder)
        #expect(result.code == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    /// A run's warning about an old export names it from the current folder,
    /// as a person would type it, not from the definition's folder.
    @Test func aKeptOldExportIsNamedFromTheCurrentFolder() throws {
        let folder = temporaryFolder()
        let definitions = folder.appendingPathComponent("defs")
        try FileManager.default.createDirectory(at: definitions, withIntermediateDirectories: true)
        let samples = packageRoot.appendingPathComponent("Samples/drift").path
        try Data(
            """
            {"name": "nightly", "local": {"path": "\(samples)/device"}, "remotes": [{"name": "drive", "path": "\(samples)/drive"}],
             "reports": {"dir": "reports"}, "export": {"dir": "exports", "keep": 1}}
            """.utf8
        ).write(to: definitions.appendingPathComponent("nightly.json"))
        #expect(try runArray(["run", "defs/nightly.json", "--quiet"], in: folder).code == 0)
        let exports = definitions.appendingPathComponent("exports")
        let old = try #require(ExportFolder.runFolders(in: exports).first)
        try Data("mine".utf8).write(to: exports.appendingPathComponent("\(old)/notes.txt"))
        let result = try runArray(["run", "defs/nightly.json", "--quiet"], in: folder)
        #expect(result.code == 0)
        #expect(
            result.stderr.hasPrefix("warning: kept the old export defs/exports/\(old), which keep: 1 would remove: notes.txt:"), "\(result.stderr)")
    }
}

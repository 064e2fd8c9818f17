import Foundation
import Testing

@testable import ReckonCore

@Suite struct PipelineDefinitionTests {
    let base = URL(fileURLWithPath: "/data/pipelines")

    func parse(_ text: String) throws(DefinitionError) -> PipelineDefinition {
        try PipelineDefinition.parse(Data(text.utf8), file: "p.json", base: base)
    }

    let valid = #"""
        {"local": {"path": "../device"}, "remotes": [{"name": "drive", "path": "drive", "label": "My Drive"}],
         "reports": {"dir": "/var/reckon"}, "export": {"from": "drive", "dir": "out", "includeArchived": true}}
        """#

    @Test func pathsAreRelativeToTheFileAndDefaultsApply() throws {
        let definition = try parse(valid)
        #expect((definition.local.kind as? MemoFolderSide)?.url == URL(fileURLWithPath: "/data/device"))
        #expect(definition.local.label == "this device")
        #expect(definition.remotes.map(\.label) == ["My Drive"])
        #expect((definition.remotes[0].kind as? MemoFolderSide)?.url == URL(fileURLWithPath: "/data/pipelines/drive"))
        #expect(definition.reportDir?.path == "/var/reckon")
        #expect(definition.export?.includeArchived == true)
        #expect(definition.export?.formats == [.json, .markdown, .zip])
        #expect(definition.check == .deep)
        #expect(definition.failOnDrift == false)
    }

    @Test(arguments: [
        (#"{"local": {"path": "a"}, "remotes": [{"path": "b", "lable": "x"}]}"#, "p.json: 'remotes[0].lable' is not a known key"),
        (#"{"local": {"path": 3}, "remotes": []}"#, "p.json: 'local.path' must be a string, found a number"),
        (#"{"remotes": [{"path": "b"}]}"#, "p.json: 'local' must be an object, found nothing"),
        (#"{"local": {"path": "a"}, "remotes": []}"#, "p.json: 'remotes' must name at least one remote"),
        (#"{"local": {"path": "a"}, "remotes": [{"path": "b"}], "check": "fast"}"#, "p.json: 'check' must be \"deep\" or \"quick\""),
        (
            #"{"local": {"path": "a"}, "remotes": [{"path": "b"}], "export": {"from": "cloud", "dir": "x"}}"#,
            "p.json: 'export.from' must be \"local\" or the name of a remote"
        ),
        (
            #"{"local": {"path": "a"}, "remotes": [{"path": "b"}], "export": {"dir": "x", "formats": ["pdf"]}}"#,
            "p.json: 'export.formats[0]' must be one of json, markdown, zip"
        ),
        (
            #"{"local": {"path": "a"}, "remotes": [{"path": "b", "name": "x"}, {"path": "c", "name": "x"}]}"#,
            "p.json: 'remotes[1].name' 'x' is already the name"
        ),
        (#"{"local": {"path": "a"}, "remotes": [{"path": "b", "name": "../x"}]}"#, "p.json: 'remotes[0].name' must be 1 to 32 small letters"),
        (#"{"local": {"path": "a"}, "remotes": [{"path": "b"}], "failOnDrift": "yes"}"#, "p.json: 'failOnDrift' must be true or false"),
        (#"{"local": {"path": "a"}, "remotes": [{"path": "b"}], "schemaVersion": 2}"#, "p.json: 'schemaVersion' must be 1"),
        (#"{"local": {"path": "a"}, "#, "p.json: is not valid JSON"),
        (
            #"{"local": {"path": "a"}, "remotes": [{"path": "b"}], "export": {"dir": "x", "keep": 3, "keep": 30}}"#,
            "p.json: 'export.keep' is given twice"
        ),
        (#"{"local": {"path": "a"}, "remotes": [{"path": "b"}, {"path": "c", "path": "d"}]}"#, "p.json: 'remotes[1].path' is given twice"),
        (#"{"local": {"path": "a"}, "local": {"path": "b"}, "remotes": [{"path": "b"}]}"#, "p.json: 'local' is given twice"),
        (#"{"$schema": 1, "local": {"path": "a"}, "remotes": [{"path": "b"}]}"#, "p.json: '$schema' must be a string"),
        (#"{"$schema": {"$ref": "x"}, "local": {"path": "a"}, "remotes": [{"path": "b"}]}"#, "p.json: '$schema' must be a string"),
        (#"{"$schema": null, "local": {"path": "a"}, "remotes": [{"path": "b"}]}"#, "p.json: '$schema' must be a string"),
        (#"{"local": {"path": "a", "$schema": "x"}, "remotes": [{"path": "b"}]}"#, "p.json: 'local.$schema' is not a known key")
    ])
    func namesTheWrongKey(_ text: String, _ expected: String) {
        do {
            _ = try parse(text)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix(expected), "\(error.description)")
        }
    }

    /// `$schema` is for editors: any string is taken and ignored, and the
    /// definition reads as it does without it (nothing is fetched: the
    /// address here could not be reached).
    @Test(arguments: ["https://reckon.invalid/schemas/pipeline.schema.json", "../schemas/pipeline.schema.json", ""])
    func aSchemaStringIsIgnored(_ address: String) throws {
        let text = valid.replacingOccurrences(of: "{\"local\"", with: "{\"$schema\": \"\(address)\", \"local\"")
        try #require(text.contains("\"$schema\""))
        #expect(try parse(text) == parse(valid))
    }

    @Test func refusesOutputInsideASource() throws {
        let definition = try parse(#"{"local": {"path": "dev"}, "remotes": [{"path": "drive"}], "reports": {"dir": "drive/reports"}}"#)
        #expect(throws: DefinitionError.self) { try definition.checkOutputsOutsideSources(file: "p.json") }
        #expect(throws: Never.self) { try parse(valid).checkOutputsOutsideSources(file: "p.json") }
    }
}

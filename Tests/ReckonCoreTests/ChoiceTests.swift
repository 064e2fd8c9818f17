import Foundation
import Testing

@testable import ReckonCore

/// Ids typed cut short, a choices file read strictly, and `reckon show`'s
/// fingerprints, which a choices file carries, as a plan's deep check makes them.
@Suite struct ChoiceTests {
    static let ids = [
        "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "3f2504e0-7425-40de-944b-e07fc1f90ae7", "16fd2706-8baf-433b-82eb-8c7fada847da"
    ].map { MemoID($0)! }.sorted()

    @Test func aPrefixNamesTheMemoItStartsWrittenWithTheDashesOrNone() throws {
        for text in ["16FD2706", "16fd2706-8b", "16fd27068baf433b", "16fd2706-8baf-433b-82eb-8c7fada847da", "16FD27068BAF433B82EB8C7FADA847DA"] {
            #expect(try MemoIDPrefix(text).match(among: Self.ids) == .one(MemoID("16fd2706-8baf-433b-82eb-8c7fada847da")!), "\(text)")
        }
        #expect(try MemoIDPrefix("3f2504e0").match(among: Self.ids) == .several(Array(Self.ids.dropFirst())))
        #expect(try MemoIDPrefix("3f2504e0-4").match(among: Self.ids) == .one(Self.ids[1]))
        #expect(try MemoIDPrefix("3f2504e1").match(among: Self.ids) == .none)
    }

    @Test func aPrefixTooShortOrNotHexIsRefusedSayingWhy() {
        #expect(throws: MemoIDPrefix.Refusal(description: "'16fd270' is too short to name a memo: give at least 8 hex digits of its id")) {
            try MemoIDPrefix("16fd270")
        }
        // A dash where the id has none, one letter beyond f, an id too long, a dash in the first eight.
        for text in ["16fd27068-baf", "16fd2706-8bag", "16fd2706-8baf-433b-82eb-8c7fada847da0", "16fd-2706", "16fd2706 "] {
            #expect(throws: MemoIDPrefix.Refusal.self, "\(text)") { try MemoIDPrefix(text) }
            #expect((try? MemoIDPrefix(text)) == nil)
        }
        #expect(
            throws: MemoIDPrefix.Refusal(
                description: "'x' is not a memo id: give its id, or at least its first 8 hex digits (with the id's dashes, or none)")
        ) { try MemoIDPrefix("x") }
    }

    @Test func severalMatchesAreListedTenAtMost() throws {
        let many = (0..<13).map { MemoID(String(format: "abcdef12-0000-4000-8000-%012x", $0))! }
        guard case .failure(let refusal) = try MemoIDPrefix("ABCDEF12").resolve(among: many, sides: "here or there") else {
            Issue.record("13 ids start so")
            return
        }
        let lines = refusal.description.split(separator: "\n").map(String.init)
        #expect(lines.first == "'ABCDEF12' starts the ids of 13 memos; give more of its digits:")
        #expect(lines.count == 12 && lines[1] == "  abcdef12-0000-4000-8000-000000000000" && lines[11] == "  and 3 more")
        guard case .failure(let none) = try MemoIDPrefix("abcdef13").resolve(among: many, sides: "here or there") else {
            Issue.record("no id starts so")
            return
        }
        #expect(none.description == "'abcdef13' is not the start of the id of any memo on here or there")
    }

    /// One valid file read; each fault names the file and the key.
    @Test func aChoicesFileIsReadStrictly() throws {
        let token = "1776609120.000000000-0-_-_-7a1db8e3df610eac"
        let good = #"""
            {"$schema": "choices.schema.json", "schemaVersion": 1, "pipeline": "nightly", "remote": "drive",
             "choices": [{"id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "take": "both", "local": "\#(token)", "remote": null}]}
            """#
        let file = try ChoicesFile.parse(Data(good.utf8), shown: "c.json")
        #expect(file.pipeline == "nightly" && file.remote == "drive")
        #expect(
            file.choices == [.init(id: MemoID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")!, take: .both, local: Fingerprint(token: token), remote: nil)])
        #expect(file.choices.first?.local?.token == token)

        func refusal(_ text: String) -> String {
            do {
                _ = try ChoicesFile.parse(Data(text.utf8), shown: "c.json")
                return "accepted"
            } catch {
                return error.description
            }
        }
        let one = #"{"id": "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "take": "local", "local": null, "remote": null}"#
        func top(_ choices: String, extra: String = "") -> String {
            #"{"schemaVersion": 1, "pipeline": "p", "remote": "r", "choices": [\#(choices)]\#(extra)}"#
        }
        #expect(refusal(top(one)) == "accepted")
        #expect(refusal("[1]") == "c.json: must be a JSON object of choices, found an array")
        #expect(refusal("{").hasPrefix("c.json: is not valid JSON ("))
        #expect(
            refusal(top(one, extra: #", "colour": 1"#)).hasPrefix(
                "c.json: 'colour' is not a known key (known: $schema, choices, pipeline, remote, schemaVersion)"))
        #expect(refusal(top(one, extra: #", "$schema": 5"#)).hasPrefix("c.json: '$schema' must be a string"))
        #expect(
            refusal(top(one).replacingOccurrences(of: #""schemaVersion": 1"#, with: #""schemaVersion": 2"#))
                == "c.json: 'schemaVersion' must be 1, the version this reckon reads")
        #expect(
            refusal(top(one).replacingOccurrences(of: #""pipeline": "p""#, with: #""pipeline": 3"#))
                == "c.json: 'pipeline' must be a string, found a number")
        #expect(refusal(#"{"schemaVersion": 1, "pipeline": "p", "remote": "r"}"#) == "c.json: 'choices' is missing")
        #expect(
            refusal(top(one.replacingOccurrences(of: #""take": "local""#, with: #""take": "mine""#)))
                == #"c.json: 'choices[0].take' must be one of local, remote, both, found 'mine'"#)
        #expect(refusal(top(one.replacingOccurrences(of: "3f2504e0-4f89", with: "3f2504e0"))).hasPrefix("c.json: 'choices[0].id' must be a memo id"))
        #expect(
            refusal(top(one.replacingOccurrences(of: #""local": null"#, with: #""local": "1-2-3""#))).hasPrefix(
                "c.json: 'choices[0].local' must be a fingerprint as a report gives it"))
        #expect(
            refusal(top(one.replacingOccurrences(of: #""remote": null"#, with: #""remote": 7"#)))
                == "c.json: 'choices[0].remote' must be a fingerprint (a string) or null, found a number")
        #expect(refusal(top(one.replacingOccurrences(of: #", "remote": null"#, with: ""))).hasPrefix("c.json: 'choices[0].remote' is missing"))
        #expect(
            refusal(top(one + ", " + one.replacingOccurrences(of: "3f2504e0", with: "3F2504E0")))
                == "c.json: 'choices[1].id' names the memo 3f2504e0-4f89-11d3-9a0c-0305e82c3301, which choices[0] names already; choose each memo once"
        )
        #expect(
            refusal(top(one).replacingOccurrences(of: #""remote": "r""#, with: #""remote": "r", "remote": "s""#))
                == "c.json: 'remote' is given twice; give it once")
    }

    /// A memo soft-deleted on a side where the report saw none is no change;
    /// one live when the report was made and deleted since is.
    @Test func softDeletedAndAbsentAreTheSameToAChoice() throws {
        let local = TempFolder()
        let remote = TempFolder()
        local.index([entry(idA, deleted: "2026-04-20T00:00:00Z")])
        local.write("memos/\(idA).json", memo(idA))
        remote.index([entry(idA)])
        remote.write("memos/\(idA).json", memo(idA))
        let sides = [MemoFolder(local.spec(.local)).load(deep: true), MemoFolder(remote.spec(.remote)).load(deep: true)]
        let differences = Reconciler.differences(local: sides[0], remote: sides[1], deep: true)
        let id = MemoID(idA)!
        let live = sides[1].fingerprint(of: id)
        func request(local print: Fingerprint?) -> ChoiceRequest {
            let file = ChoicesFile(
                shown: "c.json", pipeline: "p", remote: "remote", choices: [.init(id: id, take: .remote, local: print, remote: live)])
            return ChoiceRequest(file: file, pipeline: "p")
        }
        let taken = try request(local: nil).choices(local: sides[0], remote: sides[1], differences: differences)
        #expect(taken.take == [id: .remote])
        #expect(throws: PlanError.self) { try request(local: live).choices(local: sides[0], remote: sides[1], differences: differences) }
        do {
            _ = try request(local: live).choices(local: sides[0], remote: sides[1], differences: differences)
        } catch {
            #expect(error.description == "c.json: 1 of its choices cannot be carried out as made:\n  \(id): changed on this device since the report")
            #expect(error.refusesChoices && error.advice == ChoiceRequest.chooseAgain)
        }
    }

    /// The fingerprints `reckon show` reads (a quick listing, then the memo)
    /// are the ones a plan's deep check makes, so that a choices file filled
    /// from show is taken; and a memo the same on both sides has no difference.
    @Test func showsFingerprintsAreTheDeepChecks() throws {
        let local = TempFolder()
        let remote = TempFolder()
        local.index([entry(idA), entry(idB, tag: "v1")])
        local.write("memos/\(idA).json", memo(idA, title: "Groceries", body: "Milk\\nEggs", tags: ["home"]))
        local.write("memos/\(idB).json", memo(idB))
        remote.index([entry(idA.lowercased()), entry(idB.lowercased(), tag: "v1")])
        remote.write("memos/\(idA.lowercased()).json", memo(idA.lowercased(), title: "Groceries", body: "Milk\\nEggs\\nMiso", tags: ["home"]))
        remote.write("memos/\(idB.lowercased()).json", memo(idB.lowercased()))
        let definition = PipelineDefinition(
            name: "p", local: local.spec(.local), remotes: [remote.spec(.remote, name: "drive")], check: .deep, reportDir: nil, language: "en",
            failOnDrift: false)
        let deep = [MemoFolder(local.spec(.local)).load(deep: true), MemoFolder(remote.spec(.remote, name: "drive")).load(deep: true)]
        for (n, id) in [idA, idB].enumerated() {
            let shown = try Pipeline(startedAt: Timestamp(seconds: 0)).show(try MemoIDPrefix(id), definition, remote: "drive", context: RunContext())
            #expect(shown.local.fingerprint?.token == deep[0].fingerprint(of: MemoID(id)!)?.token)
            #expect(shown.remote.fingerprint?.token == deep[1].fingerprint(of: MemoID(id)!)?.token)
            #expect(shown.local.fingerprint?.digest != nil)
            #expect(shown.same == (n == 1))
        }
        let differing = try Pipeline(startedAt: Timestamp(seconds: 0)).show(
            try MemoIDPrefix("3f2504e0"), definition, remote: "drive", context: RunContext())
        #expect(differing.differing == ["body"])
        #expect(differing.diff?.added == 1 && differing.diff?.removed == 0)
    }
}

import Foundation
import ReckonCore
import TestSupport
import Testing

/// The JSON Schemas of every JSON reckon reads or prints, in the catalog.
let schemaFolder = packageRoot.appendingPathComponent("Sources/ReckonCore/ReckonCore.docc/Schemas")

/// Every schema file: one for each kind of JSON reckon reads or prints.
let schemaFiles = [
    "pipeline.schema.json", "report.schema.json", "history.schema.json", "plan.schema.json", "manifest.schema.json",
    "counts.schema.json", "verify.schema.json", "diff.schema.json", "apply.schema.json", "undo.schema.json", "show.schema.json",
    "choices.schema.json", "agreement.schema.json"
]

extension Requirement {
    /// Debian's python3-jsonschema: a validator of draft 2020-12 that owes
    /// nothing to reckon, run by Debian's own Python.
    static let jsonschema = Requirement("python3-jsonschema (jsonschema.Draft202012Validator for /usr/bin/python3)") {
        (try? runArray(["-I", "-c", "import jsonschema; jsonschema.Draft202012Validator"], executable: debianPython))?.code == 0
    }
}

let debianPython = URL(fileURLWithPath: "/usr/bin/python3")

/// One document for the validator: a file, a zip's entry, or each line of
/// a JSON Lines file, against one schema.
struct SchemaJob: Codable {
    var schema: String
    var document: String
    var zipEntry: String? = nil
    var lines = false
}

/// What the validator found: each schema's own error (nil when it is a
/// valid draft 2020-12 schema), and each document's errors.
struct SchemaVerdicts: Decodable {
    struct Document: Decodable {
        var schema: String
        var document: String
        var line: Int
        var errors: [String]
        /// Whether the document with one key more at its top is refused (nil when the document is not an object).
        var extraKeyRefused: Bool?
    }
    var schemas: [String: String?]
    var documents: [Document]
}

/// Checks every schema in the folder with `check_schema`, then validates
/// each job's document; a `$ref` that would be fetched fails instead.
private let validatorScript = #"""
    import json, os, sys, zipfile
    import jsonschema

    folder, jobs_file = sys.argv[1], sys.argv[2]

    def never_fetched(uri):
        raise jsonschema.exceptions.RefResolutionError("the schema asked for " + uri + ", which is never fetched")

    validators, verdicts = {}, {"schemas": {}, "documents": []}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".schema.json"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            schema = json.load(f)
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.exceptions.SchemaError as error:
            verdicts["schemas"][name] = error.message
            continue
        verdicts["schemas"][name] = None
        resolver = jsonschema.RefResolver.from_schema(schema, handlers={"http": never_fetched, "https": never_fetched})
        validators[name] = jsonschema.Draft202012Validator(schema, resolver=resolver)

    with open(jobs_file, encoding="utf-8") as f:
        jobs = json.load(f)
    for job in jobs:
        if job.get("zipEntry"):
            with zipfile.ZipFile(job["document"]) as archive:
                text = archive.read(job["zipEntry"]).decode("utf-8")
        else:
            with open(job["document"], encoding="utf-8") as f:
                text = f.read()
        texts = [line for line in text.split("\n") if line] if job["lines"] else [text]
        validator = validators.get(job["schema"])
        for number, one in enumerate(texts):
            value = json.loads(one)
            if validator is None:
                errors, extra = ["the schema " + job["schema"] + " is missing or not a schema"], None
            else:
                errors = ["/" + "/".join(str(p) for p in e.absolute_path) + ": " + e.message for e in validator.iter_errors(value)]
                extra = None
                if isinstance(value, dict):
                    value["keyNoSchemaNames"] = True
                    extra = not validator.is_valid(value)
            verdicts["documents"].append(
                {"schema": job["schema"], "document": job["document"], "line": number, "errors": errors, "extraKeyRefused": extra})
    print(json.dumps(verdicts))
    """#

/// Runs Debian's validator over `jobs`.
func validateWithSchemas(_ jobs: [SchemaJob]) throws -> SchemaVerdicts {
    let jobsFile = scratchFolder("schema-jobs").appendingPathComponent("jobs.json")
    try JSONEncoder().encode(jobs).write(to: jobsFile)
    let result = try runArray(["-I", "-c", validatorScript, schemaFolder.path, jobsFile.path], executable: debianPython)
    try #require(result.code == 0, "the validator failed: \(result.stderr)")
    return try JSONDecoder().decode(SchemaVerdicts.self, from: Data(result.stdout.utf8))
}

/// A schema file, parsed.
func schemaObject(_ name: String) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(contentsOf: schemaFolder.appendingPathComponent(name))) as! [String: Any]
}

/// The value at `path` (keys, from the top) in a parsed schema.
func schemaValue(_ schema: [String: Any], _ path: String...) -> Any? {
    var value: Any? = schema
    for key in path { value = (value as? [String: Any])?[key] }
    return value
}

/// The strings of the `enum` at `path`.
func schemaEnum(_ schema: [String: Any], _ path: String...) -> Set<String> {
    var value: Any? = schema
    for key in path { value = (value as? [String: Any])?[key] }
    return Set((value as? [String: Any])?["enum"] as? [String] ?? [])
}

/// The property names of the object schema at `path`.
func schemaKeys(_ schema: [String: Any], _ path: String...) -> Set<String> {
    var value: Any? = schema
    for key in path { value = (value as? [String: Any])?[key] }
    return Set(((value as? [String: Any])?["properties"] as? [String: Any])?.keys ?? [:].keys)
}

/// The raw values of an enumeration's cases.
func raw<T: CaseIterable & RawRepresentable>(_ type: T.Type) -> Set<String> where T.RawValue == String {
    Set(T.allCases.map(\.rawValue))
}

/// Every value in a parsed JSON tree, with the key it is under.
func everyMember(of value: Any, _ visit: (String, Any) -> Void) {
    if let object = value as? [String: Any] {
        for (key, member) in object {
            visit(key, member)
            everyMember(of: member, visit)
        }
    } else if let array = value as? [Any] {
        for member in array { everyMember(of: member, visit) }
    }
}

/// A folder with copies of `Samples/` and `Pipelines/`, so that the
/// pipelines' outputs (`../out/…`) land in it, and the documents reckon
/// printed or wrote there, each for its schema. Every command runs at a
/// time given in days after 2026-04-19 12:00 UTC, as `BaselinePipeline`'s do.
struct SchemaCorpus {
    let root = scratchFolder("schemas")
    var jobs: [SchemaJob] = []

    init() throws {
        for name in ["Samples", "Pipelines"] {
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent(name), to: root.appendingPathComponent(name))
        }
        // The remote the pipelines name, as `rclone config` leaves it: validate looks it up.
        try Data("[gdrive]\ntype = drive\n".utf8).write(to: url("rclone.conf"))
    }

    func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// Runs reckon in `folder` (the corpus folder by default), expecting
    /// `code` (nil: any).
    @discardableResult
    func reckon(
        _ arguments: [String], day: Int = 0, code: Int32?, in folder: URL? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RunResult {
        let result = try runArray(
            arguments, environment: ["SOURCE_DATE_EPOCH": String(1_776_600_000 + day * 86_400), "RCLONE_CONFIG": url("rclone.conf").path],
            in: folder ?? root)
        #expect(
            code.map { result.code == $0 } ?? true, "reckon \(arguments.joined(separator: " ")): \(result.stdout)\(result.stderr)",
            sourceLocation: sourceLocation)
        return result
    }

    /// Runs reckon and has what it printed validated against `schema`; gives it parsed.
    @discardableResult
    mutating func printed(
        _ schema: String, _ arguments: [String], day: Int = 0, code: Int32?, in folder: URL? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (result: RunResult, json: [String: Any]) {
        let result = try reckon(arguments, day: day, code: code, in: folder, sourceLocation: sourceLocation)
        let file = url("printed/\(jobs.count)-\(arguments[0]).json")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(result.stdout.utf8).write(to: file)
        jobs.append(SchemaJob(schema: schema, document: file.path))
        return (result, try json(result.stdout))
    }

    /// Has a file reckon wrote validated against `schema` (a copy of it,
    /// kept from what later commands change); `path` is inside the corpus folder.
    mutating func written(_ schema: String, _ path: String, zipEntry: String? = nil, lines: Bool = false) throws {
        try written(schema, url(path), zipEntry: zipEntry, lines: lines)
    }

    mutating func written(_ schema: String, _ source: URL, zipEntry: String? = nil, lines: Bool = false) throws {
        try #require(FileKind(path: source.path).isRegular, "\(source.path) was written")
        let copy = url("written/\(jobs.count)-\(source.lastPathComponent)")
        try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source, to: copy)
        jobs.append(SchemaJob(schema: schema, document: copy.path, zipEntry: zipEntry, lines: lines))
    }

    /// Validates every document with Debian's validator: each must be
    /// valid, and refused with one key more at its top (so a key reckon
    /// adds fails until its schema names it); `schemas` are the ones met.
    func validate(_ schemas: Set<String>, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let verdicts = try validateWithSchemas(jobs)
        for name in schemas {
            #expect(verdicts.schemas[name] == .some(nil), "\(name) is a draft 2020-12 schema", sourceLocation: sourceLocation)
        }
        for document in verdicts.documents {
            let name = document.document + (document.line > 0 ? " line \(document.line + 1)" : "")
            #expect(
                document.errors.isEmpty, "\(name) against \(document.schema): \(document.errors.joined(separator: "; "))",
                sourceLocation: sourceLocation)
            #expect(
                document.extraKeyRefused == true, "\(name) with a key more is still valid against \(document.schema)",
                sourceLocation: sourceLocation)
        }
        let tally = Dictionary(grouping: verdicts.documents, by: \.schema).mapValues(\.count)
        #expect(Set(tally.keys) == schemas, "\(tally)", sourceLocation: sourceLocation)
        print("Valid against their schemas: " + tally.sorted { $0.key < $1.key }.map { "\($0.value) for \($0.key)" }.joined(separator: ", "))
    }
}

@Suite struct SchemaTests {
    /// Every schema is draft 2020-12 with an `$id` of its own name (an
    /// address never fetched), a title and a description; it refers only
    /// inside itself, constrains dates and ids by pattern (Debian's
    /// validator checks no `format`), and a definition shared by several
    /// files is the same in each.
    @Test func eachSchemaIsSelfContainedAndSharedDefinitionsAgree() throws {
        let found = try FileManager.default.contentsOfDirectory(atPath: schemaFolder.path).filter { $0.hasSuffix(".json") }
        #expect(Set(found) == Set(schemaFiles))
        var shared: [String: (file: String, text: Data)] = [:]
        for name in schemaFiles {
            let schema = try schemaObject(name)
            #expect(schema["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema", "\(name)")
            #expect(schema["$id"] as? String == "https://reckon.invalid/schemas/\(name)", "\(name)")
            #expect((schema["title"] as? String)?.isEmpty == false, "\(name)")
            #expect((schema["description"] as? String)?.isEmpty == false, "\(name)")
            #expect(schema["type"] as? String == "object", "\(name): every document is an object")
            #expect(schema["additionalProperties"] as? Bool == false, "\(name): a key reckon adds fails until the schema names it")
            everyMember(of: schema) { key, value in
                #expect(!(key == "format" && value is String), "\(name): a format is checked by no validator here; give a pattern")
                if key == "$ref" { #expect((value as? String)?.hasPrefix("#/$defs/") == true, "\(name): \(value) is outside the file") }
            }
            for (def, value) in schema["$defs"] as? [String: Any] ?? [:] {
                let text = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
                if let earlier = shared[def] {
                    #expect(earlier.text == text, "$defs.\(def) differs between \(earlier.file) and \(name)")
                } else {
                    shared[def] = (name, text)
                }
            }
        }
    }

    /// The schemas name every value of each enumeration the code writes,
    /// and no other; the definition schema names every key reckon reads,
    /// and the keys each kind of side refuses.
    @Test func enumerationsAndKeysAreTheCodes() throws {
        let report = try schemaObject("report.schema.json")
        #expect(schemaEnum(report, "$defs", "sigil") == raw(Difference.Sigil.self).subtracting(["="]), "= is never listed")
        #expect(schemaEnum(report, "$defs", "differenceKind") == raw(Difference.Kind.self))
        #expect(schemaEnum(report, "$defs", "changed") == raw(Difference.Changed.self))
        #expect(schemaEnum(report, "$defs", "severity") == raw(Problem.Severity.self))
        #expect(schemaEnum(report, "$defs", "problemKind") == raw(Problem.Kind.self))
        #expect(schemaEnum(report, "$defs", "sideRole") == raw(SideRole.self))
        #expect(schemaEnum(report, "$defs", "sideStatus") == raw(SideStatus.self))
        #expect(schemaEnum(report, "$defs", "checkMode") == raw(CheckMode.self))
        #expect(schemaEnum(report, "$defs", "exportFormat") == raw(ExportFormat.self))
        #expect(schemaEnum(report, "$defs", "sideReport", "properties", "countsFrom") == raw(SideReport.CountsFrom.self))
        #expect(schemaEnum(report, "$defs", "sideReport", "properties", "baseline") == raw(SideBaseline.Use.self))
        #expect(schemaEnum(report, "properties", "outcome") == raw(Report.Outcome.self))
        let plan = try schemaObject("plan.schema.json")
        #expect(schemaEnum(plan, "$defs", "actionKind") == raw(PlanAction.Kind.self))
        #expect(schemaEnum(plan, "$defs", "sideKind") == Set(SideKinds.names))
        var outcomes: [Set<String>] = []
        for mode in ApplyResult.Mode.allCases {
            outcomes.append(schemaEnum(try schemaObject("\(mode.rawValue).schema.json"), "$defs", "\(mode.rawValue)Outcome"))
        }
        let everyOutcome = outcomes.reduce(into: Set<String>()) { $0.formUnion($1) }
        #expect(everyOutcome == raw(ApplyResult.Outcome.self))
        #expect(!outcomes.contains { $0.isEmpty }, "one schema for each mode")
        let verify = try schemaObject("verify.schema.json")
        #expect(schemaEnum(verify, "properties", "files", "items", "properties", "status") == raw(ExportVerification.FileStatus.self))
        #expect(schemaEnum(verify, "$defs", "exportChange", "properties", "change") == raw(ExportChange.Kind.self))
        #expect(schemaEnum(verify, "$defs", "exportPlace") == raw(ExportManifest.Place.self))

        let show = try schemaObject("show.schema.json")
        #expect(schemaEnum(show, "properties", "sigil") == raw(Difference.Sigil.self))
        #expect(schemaEnum(show, "properties", "differs", "items") == Set(MemoShow.keys))
        #expect(schemaEnum(show, "$defs", "differenceKind") == raw(Difference.Kind.self))
        let choices = try schemaObject("choices.schema.json")
        #expect(schemaKeys(choices) == ChoicesFile.topKeys)
        #expect(schemaKeys(choices, "$defs", "choice") == ChoicesFile.choiceKeys)
        #expect(schemaEnum(choices, "$defs", "choice", "properties", "take") == raw(ConflictChoices.Take.self))

        let pipeline = try schemaObject("pipeline.schema.json")
        #expect(schemaKeys(pipeline) == PipelineDefinition.topKeys)
        #expect(schemaKeys(pipeline, "$defs", "side") == PipelineDefinition.sideKeys)
        #expect(schemaKeys(pipeline, "properties", "export") == PipelineDefinition.exportKeys)
        #expect(schemaKeys(pipeline, "properties", "limits") == PipelineDefinition.limitKeys)
        #expect(schemaKeys(pipeline, "properties", "alarm") == PipelineDefinition.alarmKeys)
        // The objects a kind's keys hold: an rclone side's timeouts, a store's model.
        let objects = Dictionary(SideKinds.definitionKeys.map { ($0.name, $0.objectKeys) }) { first, _ in first }
        #expect(schemaKeys(pipeline, "$defs", "side", "properties", "timeouts") == objects["timeouts"] ?? nil)
        #expect(schemaKeys(pipeline, "$defs", "storeModel") == objects["model"] ?? nil)
        #expect(schemaKeys(pipeline, "$defs", "storeModel", "properties", "attributes") == Set(StoreModel.fieldNames))
        #expect(schemaKeys(pipeline, "properties", "reports") == PipelineDefinition.reportsKeys)
        #expect(schemaEnum(pipeline, "properties", "reports", "properties", "content") == Set(ReportContent.allCases.map(\.rawValue)))
        for key in ["quarantine", "state", "cache"] {
            #expect(schemaKeys(pipeline, "properties", key) == PipelineDefinition.reportKeys, "\(key)")
        }
        #expect(schemaEnum(pipeline, "properties", "language") == Set(Strings.languages))
        #expect(schemaEnum(pipeline, "$defs", "side", "properties", "kind") == Set(SideKinds.names))
        // Each kind's branch refuses the keys only other kinds read (an rclone side's path besides).
        let branches = schemaValue(pipeline, "$defs", "side", "allOf") as? [[String: Any]] ?? []
        let kindKeys = Set(SideKinds.definitionKeys.map(\.name))
        for kind in SideKinds.all {
            let name = kind.name
            var refused: Set<String> = []
            for branch in branches where schemaValue(branch, "if", "properties", "kind", "const") as? String == name {
                let properties = schemaValue(branch, "then", "properties") as? [String: Any] ?? [:]
                refused = Set(properties.keys.filter { properties[$0] as? Bool == false })
            }
            let othersOnly = kindKeys.subtracting(kind.definitionKeys.map(\.name))
            #expect(refused.subtracting(["path"]) == othersOnly, "kind \(name)")
        }
    }

    /// The sample pipeline run twice (the second run compares with the
    /// first's baseline, and the history has two lines), the nightly one,
    /// and reconcile on the samples, the store and every damaged fixture:
    /// reports, history lines and manifests.
    @Test(.needs(.python3, .jsonschema)) func reportsHistoryAndManifestsOfRunsAreValid() throws {
        var corpus = try SchemaCorpus()
        let report = "report.schema.json"
        let manifest = "manifest.schema.json"
        try corpus.reckon(["run", "Pipelines/sample.json"], day: 0, code: 0)
        try corpus.written(report, "out/sample/reports/report.json")
        let second = try corpus.printed(report, ["run", "Pipelines/sample.json", "--json"], day: 1, code: 0).json
        #expect((second["sides"] as? [[String: Any]])?.allSatisfy { $0["baseline"] as? String == "used" } == true)
        try corpus.written(report, "out/sample/reports/report.json")
        try corpus.written("history.schema.json", "out/sample/reports/history.jsonl", lines: true)
        // The store against a folder: its agreement holds every memo the two runs saw equal.
        try corpus.written("agreement.schema.json", "out/sample/reports/state/agreement-drive.json")
        try corpus.printed(report, ["run", "Pipelines/nightly.json", "--json"], code: 0)
        for run in ExportFolder.runFolders(in: corpus.url("out/sample/export")) {
            try corpus.written(manifest, "out/sample/export/\(run)/manifest.json")
        }
        try corpus.written(manifest, "out/nightly/exports/latest/manifest.json")
        try corpus.written(manifest, "out/nightly/exports/latest/memos.zip", zipEntry: "manifest.json")

        for sample in ["drift", "in-sync", "empty"] {
            try corpus.printed(
                report, ["reconcile", "--local", "Samples/\(sample)/device", "--remote", "Samples/\(sample)/drive", "--json"],
                code: sample == "drift" ? 1 : 0)
        }
        try corpus.printed(report, ["reconcile", "--local", "Samples/store/default.store", "--remote", "Samples/drift/drive", "--json"], code: 1)
        for damage in damageCases {
            try corpus.printed(
                report,
                [
                    "reconcile", "--local", fixtures.appendingPathComponent("good").path, "--remote",
                    fixtures.appendingPathComponent("bad/\(damage.name)").path, "--out", "out/damaged/\(damage.name)", "--json"
                ], code: damage.exit)
        }
        try corpus.validate([report, "history.schema.json", manifest, "agreement.schema.json"])
    }

    /// counts --json of each sample side, the store, a side that is not
    /// there, and each damaged fixture.
    @Test(.needs(.python3, .jsonschema)) func countsAreValid() throws {
        var corpus = try SchemaCorpus()
        let counts = "counts.schema.json"
        for side in ["drift/device", "drift/drive", "in-sync/device", "empty/drive", "store/default.store"] {
            try corpus.printed(counts, ["counts", "--json", "Samples/\(side)"], code: 0)
        }
        try corpus.printed(counts, ["counts", "--json", "Samples/no-such-side"], code: 2)
        for damage in damageCases {
            // counts reads the index alone: a damaged memo file is no trouble to it.
            let (result, printed) = try corpus.printed(
                counts, ["counts", "--json", fixtures.appendingPathComponent("bad/\(damage.name)").path], code: nil)
            let unusable = ["failed", "degraded"].contains(printed["status"] as? String)
            #expect(unusable ? result.code == 2 : [0, 2].contains(result.code), "\(damage.name): \(result.stderr)")
        }
        try corpus.validate([counts])
    }

    /// Exports of the samples and the store, verified whole, moved on and
    /// damaged (folders and zips), and compared with diff, every kind of
    /// change among them.
    @Test(.needs(.python3, .jsonschema)) func exportsVerifyAndDiffAreValid() throws {
        var corpus = try SchemaCorpus()
        let manifest = "manifest.schema.json"
        let verify = "verify.schema.json"
        let diff = "diff.schema.json"
        try corpus.reckon(["export", "Samples/drift/device", "--out", "exports/device"], code: 0)
        try corpus.reckon(["export", "Samples/drift/drive", "--out", "exports/drive", "--include-archived"], code: 0)
        try corpus.reckon(["export", "Samples/store/default.store", "--out", "exports/store", "--format", "zip,json"], code: 0)
        // BaselineTests' pipeline, its sides drifted since its baseline: every kind of change between them.
        let drifted = try driftedSincePipeline()
        try corpus.reckon(["export", drifted.drive.url.path, "--out", "exports/then", "--include-archived"], code: 0)
        try corpus.reckon(["export", drifted.device.url.path, "--out", "exports/now", "--include-archived"], code: 0)
        for export in ["device", "drive", "store", "then", "now"] {
            try corpus.written(manifest, "exports/\(export)/manifest.json")
            try corpus.written(manifest, "exports/\(export)/memos.zip", zipEntry: "manifest.json")
        }

        try corpus.printed(verify, ["verify", "--json", "exports/device"], code: 0)
        try corpus.printed(verify, ["verify", "--json", "exports/drive/memos.zip"], code: 0)
        try corpus.printed(verify, ["verify", "--json", "exports/store"], code: 0)
        try corpus.printed(verify, ["verify", "--json", "exports/device", "--against", "Samples/drift/drive"], code: 1)
        try corpus.printed(verify, ["verify", "--json", "exports/then/memos.zip", "--against", drifted.device.url.path], code: 1)
        // Damaged: a file changed, one not listed, one missing.
        try FileManager.default.copyItem(at: corpus.url("exports/device"), to: corpus.url("exports/broken"))
        let memos = corpus.url("exports/broken/memos.json")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: memos.path)
        try Data(try read(memos).replacingOccurrences(of: "Groceries", with: "Groceriez").utf8).write(to: memos)
        try Data("not listed".utf8).write(to: corpus.url("exports/broken/notes.txt"))
        try FileManager.default.removeItem(at: corpus.url("exports/broken/memos.zip"))
        let broken = try corpus.printed(verify, ["verify", "--json", "exports/broken"], code: 2).json
        let statuses = Set((broken["files"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String })
        #expect(broken["status"] as? String == "damaged" && statuses.isSuperset(of: ["changed", "unlisted", "missing"]), "\(statuses)")

        try corpus.printed(diff, ["diff", "--json", "exports/device", "exports/drive"], code: 1)
        try corpus.printed(diff, ["diff", "--json", "exports/device", "exports/store"], code: 0)
        let everyChange = try corpus.printed(diff, ["diff", "--json", "exports/then", "exports/now"], code: 1).json
        let changes = Set((everyChange["changes"] as? [[String: Any]] ?? []).compactMap { $0["change"] as? String })
        #expect(changes == raw(ExportChange.Kind.self), "\(changes)")
        try corpus.printed(diff, ["diff", "--json", "exports/now/memos.zip", "exports/then"], code: 1)
        try corpus.validate([manifest, verify, diff])
    }

    /// plan on the sample pipeline (its store is never written); plan,
    /// apply and undo on copies of the drifted sample's folders, and on
    /// BaselineTests' drifted pipeline with an orphan memo file besides,
    /// which plans every kind of action.
    @Test(.needs(.python3, .jsonschema)) func plansAndWhatApplyAndUndoDidAreValid() throws {
        var corpus = try SchemaCorpus()
        let plan = "plan.schema.json"
        let apply = "apply.schema.json"
        let undo = "undo.schema.json"
        try corpus.reckon(["run", "Pipelines/sample.json"], day: 0, code: 0)
        let storePlan = try corpus.printed(plan, ["plan", "Pipelines/sample.json", "--json"], day: 1, code: 1).json
        let onlyOnDrive = try #require((storePlan["actions"] as? [[String: Any]])?.first?["id"] as? String)
        let notPossible = try corpus.printed(
            plan, ["plan", "Pipelines/sample.json", "--json", "--take", "\(onlyOnDrive)=remote"], day: 1, code: 1
        ).json
        #expect((notPossible["actions"] as? [[String: Any]])?.first?["action"] as? String == "not-possible")
        try corpus.written(plan, "out/sample/reports/state/plan.json")

        let repair = corpus.url("repair")
        try FileManager.default.createDirectory(at: repair, withIntermediateDirectories: true)
        for side in ["device", "drive"] {
            try FileManager.default.copyItem(at: corpus.url("Samples/drift/\(side)"), to: repair.appendingPathComponent(side))
        }
        let definition = #"""
            {"name": "repair", "local": {"name": "device", "path": "device"}, "remotes": [{"name": "drive", "path": "drive"}],
             "reports": {"dir": "out"}}
            """#
        try Data(definition.utf8).write(to: repair.appendingPathComponent("p.json"))
        let conflict = try corpus.printed(plan, ["plan", "repair/p.json", "--json"], code: 1).json
        let only = try #require((conflict["actions"] as? [[String: Any]])?.first?["id"] as? String)
        try corpus.printed(plan, ["plan", "repair/p.json", "--json", "--take", "\(only)=remote"], code: 1)
        try corpus.written(plan, "repair/out/state/plan.json")
        let run = try #require(try corpus.printed(apply, ["apply", "repair/out/state/plan.json", "--yes", "--json"], code: 0).json["run"] as? String)
        try corpus.written(apply, "repair/out/state/apply/\(run)/report.json")
        try corpus.printed(undo, ["undo", run, "--state", "repair/out/state", "--json"], code: 0)
        try corpus.written(undo, "repair/out/state/apply/\(run)/undo-report.json")

        let drifted = try driftedSincePipeline()
        let index = drifted.drive.url.appendingPathComponent("index.json")
        let entry = try #require(try read(index).firstRange(of: try Regex(#"\{"id": "\#(EditableSide.id(6))"[^}]*\}, "#)))
        try Data(try read(index).replacingCharacters(in: entry, with: "").utf8).write(to: index)
        let everyAction = try corpus.printed(plan, ["plan", "p.json", "--json"], day: 1, code: 1, in: drifted.folder).json
        let kinds = Set((everyAction["actions"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String })
        #expect(kinds.isSuperset(of: ["copy", "soft-delete", "conflict", "fix-index"]), "\(kinds)")
        try corpus.written(plan, drifted.planFile)
        let applying = ["apply", drifted.planFile.path, "--yes", "--json"]
        let first = try corpus.printed(apply, applying, day: 1, code: 1, in: drifted.folder).json
        let taking = ["--take", EditableSide.id(3) + "=both", "--take", EditableSide.id(8) + "=remote"]
        let settled = try corpus.printed(plan, ["plan", "p.json", "--json"] + taking, day: 1, code: 1, in: drifted.folder).json
        #expect((settled["actions"] as? [[String: Any]])?.contains { $0["conflictCopy"] is String } == true)
        let second = try corpus.printed(apply, applying, day: 1, code: 0, in: drifted.folder).json
        #expect((second["run"] as? String)?.hasSuffix("-2") == true, "a second run in the same second")
        // Undone newest first: the second run (its id with -2, in the same second), then the first.
        for result in [second, first] {
            let run = try #require(result["run"] as? String)
            let folder = drifted.state.appendingPathComponent("apply/\(run)")
            try corpus.written(apply, folder.appendingPathComponent("report.json"))
            try corpus.printed(undo, ["undo", run, "--state", drifted.state.path, "--json"], day: 1, code: 0, in: drifted.folder)
            try corpus.written(undo, folder.appendingPathComponent("undo-report.json"))
        }
        try corpus.validate([plan, apply, undo])
    }

    /// show --json of a memo the same on both sides, one on one side only,
    /// one whose body differs by a line among many (a fold), one damaged on
    /// a side, and one of the app's store; and choices files that reckon
    /// plan takes, one with a side's fingerprint null.
    @Test(.needs(.python3, .jsonschema)) func showOutputsAndChoicesFilesAreValid() throws {
        var corpus = try SchemaCorpus()
        let show = "show.schema.json"
        let choices = "choices.schema.json"
        let drift = ["--local", "Samples/drift/device", "--remote", "Samples/drift/drive"]
        let inSync = ["--local", "Samples/in-sync/device", "--remote", "Samples/in-sync/drive"]
        try corpus.printed(show, ["show", "7c9e6679", "--json"] + drift, code: 0)
        let only = try corpus.printed(show, ["show", "E4EAAAF2", "--json"] + drift, code: 1).json
        try corpus.printed(show, ["show", "3f2504e0", "--json", "--local", "Samples/store/default.store", "--remote", "Samples/drift/drive"], code: 0)
        // One line of twenty changed on the drive: the unchanged runs around it are folded.
        let memo = corpus.url("Samples/in-sync/drive/60dMemo/memos/7c9e6679-7425-40de-944b-e07fc1f90ae7.json")
        var fields = try json(read(memo))
        let lines = (1...20).map { "Day \($0)" }
        fields["body"] = lines.joined(separator: "\n")
        try JSONSerialization.data(withJSONObject: fields).write(to: memo)
        let device = corpus.url("Samples/in-sync/device/60dMemo/memos/7C9E6679-7425-40DE-944B-E07FC1F90AE7.json")
        var local = try json(read(device))
        local["body"] = lines.map { $0 == "Day 10" ? "Day ten" : $0 }.joined(separator: "\n")
        try JSONSerialization.data(withJSONObject: local).write(to: device)
        let edited = try corpus.printed(show, ["show", "7c9e6679-7425", "--json"] + inSync, code: 1).json
        let pieces = (edited["diff"] as? [String: Any])?["pieces"] as? [[String: Any]] ?? []
        #expect(pieces.filter { $0["folded"] != nil }.count == 2, "\(pieces)")

        // Choices files made from what show prints, each taken by plan.
        func prints(_ shown: [String: Any]) -> (String?, String?) {
            ((shown["local"] as? [String: Any])?["fingerprint"] as? String, (shown["remote"] as? [String: Any])?["fingerprint"] as? String)
        }
        for (sides, shown, take, out) in [(inSync, edited, "local", "out/in-sync"), (drift, only, "remote", "out/drift")] {
            try corpus.reckon(["reconcile"] + sides + ["--out", out], code: 1)
            let (l, r) = prints(shown)
            let file = corpus.url("\(out)/choices.json")
            try Data(choicesFile(pipeline: "reconcile", remote: "remote", [(shown["id"] as! String, take, l, r)]).utf8).write(to: file)
            try corpus.reckon(["plan"] + sides + ["--out", out, "--choices", file.path], code: 1)
            try corpus.written(choices, file)
        }
        #expect(prints(only).0 == nil, "a side without the memo: null")

        try Data("{ not json".utf8).write(to: corpus.url("Samples/in-sync/drive/60dMemo/memos/a3bb189e-8bf9-3888-9912-ace4e6543002.json"))
        let damaged = try corpus.printed(show, ["show", "a3bb189e", "--json"] + inSync, code: 2).json
        #expect(((damaged["remote"] as? [String: Any])?["problems"] as? [String])?.count == 1)
        try corpus.validate([show, choices])
    }

    /// A definition reckon refuses, and the key `reckon validate` names.
    struct RefusedDefinition: Sendable, CustomTestStringConvertible {
        var key: String
        var text: String
        var testDescription: String { "\(key): \(text)" }
    }

    /// A definition with `top` keys besides its sides, and `local` and
    /// `remote` keys besides their paths (each starting with a comma).
    static func definition(top: String = "", local: String = "", remote: String = "") -> String {
        #"{"local": {"path": "../Samples/drift/device"\#(local)}, "remotes": [{"name": "drive", "path": "../Samples/drift/drive"\#(remote)}]\#(top)}"#
    }

    /// What reckon refuses (exit 64) that a schema can say: an unknown key,
    /// a wrong type or value, a missing key, a key of another kind of side.
    static let refused: [RefusedDefinition] = [
        .init(key: "colour", text: definition(top: #", "colour": "blue""#)),
        .init(key: "remotes[0].lable", text: definition(remote: #", "lable": "x""#)),
        .init(key: "export.zipLevel", text: definition(top: #", "export": {"dir": "../out/x", "zipLevel": 1}"#)),
        .init(key: "local.model.attributes.colour", text: definition(local: #", "kind": "store", "model": {"attributes": {"colour": "c"}}"#)),
        .init(key: "local.model.attributes.title", text: definition(local: #", "kind": "store", "model": {"attributes": {"title": "1st"}}"#)),
        .init(key: "$schema", text: definition(top: #", "$schema": 5"#)),
        .init(key: "check", text: definition(top: #", "check": 3"#)),
        .init(key: "check", text: definition(top: #", "check": "shallow""#)),
        .init(key: "failOnDrift", text: definition(top: #", "failOnDrift": "yes""#)),
        .init(key: "name", text: definition(top: #", "name": """#)),
        .init(key: "schemaVersion", text: definition(top: #", "schemaVersion": 2"#)),
        .init(key: "language", text: definition(top: #", "language": "fr""#)),
        .init(key: "remotes", text: #"{"local": {"path": "../Samples/drift/device"}, "remotes": {"path": "../Samples/drift/drive"}}"#),
        .init(key: "remotes", text: #"{"local": {"path": "../Samples/drift/device"}, "remotes": []}"#),
        .init(key: "remotes", text: #"{"local": {"path": "../Samples/drift/device"}}"#),
        .init(key: "local", text: #"{"remotes": [{"path": "../Samples/drift/drive"}]}"#),
        .init(key: "local.path", text: #"{"local": {"path": 3}, "remotes": [{"path": "../Samples/drift/drive"}]}"#),
        .init(key: "local.path", text: #"{"local": {"label": "here"}, "remotes": [{"path": "../Samples/drift/drive"}]}"#),
        .init(key: "remotes[0].name", text: definition(remote: #", "name": "Drive""#).replacingOccurrences(of: #""name": "drive", "#, with: "")),
        .init(key: "remotes[0].readOnly", text: definition(remote: #", "readOnly": "yes""#)),
        .init(key: "remotes[0].kind", text: definition(remote: #", "kind": "dropbox""#)),
        .init(key: "remotes[0].remote", text: definition(remote: #", "remote": "gdrive:memos""#)),
        .init(key: "local.timeouts", text: definition(local: #", "kind": "store", "timeouts": {"io": 5}"#)),
        .init(key: "remotes[0].app", text: definition(remote: #", "app": "com.example.memo""#)),
        .init(key: "remotes[0].path", text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone", "remote": "gdrive:memos", "path": "b"}]}"#),
        .init(key: "remotes[0].remote", text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone"}]}"#),
        .init(key: "remotes[0].remote", text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone", "remote": "no-colon"}]}"#),
        .init(key: "remotes[0].flags", text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone", "remote": "g:m", "flags": "--fast-list"}]}"#),
        .init(
            key: "remotes[0].timeouts.connect",
            text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone", "remote": "g:m", "timeouts": {"connect": 0}}]}"#),
        .init(key: "remotes[0].transfers", text: definition(remote: #", "transfers": 4"#)),
        .init(key: "remotes[0].transfers", text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone", "remote": "g:m", "transfers": 0}]}"#),
        .init(key: "remotes[0].transfers", text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone", "remote": "g:m", "transfers": 65}]}"#),
        .init(key: "remotes[0].transfers", text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone", "remote": "g:m", "transfers": 2.5}]}"#),
        .init(key: "remotes[0].transfers", text: #"{"local": {"path": "a"}, "remotes": [{"kind": "rclone", "remote": "g:m", "transfers": "8"}]}"#),
        .init(key: "reports.dir", text: definition(top: #", "reports": {}"#)),
        .init(key: "state", text: definition(top: #", "state": "../out/state""#)),
        .init(key: "export.dir", text: definition(top: #", "export": {"from": "drive"}"#)),
        .init(key: "export.formats[0]", text: definition(top: #", "export": {"dir": "../out/x", "formats": ["pdf"]}"#)),
        .init(key: "export.formats", text: definition(top: #", "export": {"dir": "../out/x", "formats": []}"#)),
        .init(key: "export.keep", text: definition(top: #", "export": {"dir": "../out/x", "keep": 0}"#)),
        .init(key: "export.keep", text: definition(top: #", "export": {"dir": "../out/x", "keep": 2.5}"#)),
        .init(key: "export.includeArchived", text: definition(top: #", "export": {"dir": "../out/x", "includeArchived": 1}"#)),
        .init(key: "alarm.deletedPercent", text: definition(top: #", "alarm": {"deletedPercent": 100}"#)),
        .init(key: "alarm.deletedPercent", text: definition(top: #", "alarm": {"deletedPercent": 0}"#)),
        .init(key: "alarm.deletedCount", text: definition(top: #", "alarm": {"deletedCount": 0}"#)),
        .init(key: "limits.nestingDepth", text: definition(top: #", "limits": {"nestingDepth": 1}"#)),
        .init(key: "limits.memoBytes", text: definition(top: #", "limits": {"memoBytes": 2199023255552}"#))
    ]

    /// Every definition reckon accepts here is valid against the schema
    /// (the repository's pipelines, and one with every key); every one it
    /// refuses with a fault a schema can say is invalid against it.
    @Test(.needs(.python3, .jsonschema)) func definitionsAreRefusedAlikeByReckonAndTheSchema() throws {
        let corpus = try SchemaCorpus()
        let folder = corpus.url("defs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let schema = schemaFolder.appendingPathComponent("pipeline.schema.json").path
        try FileManager.default.copyItem(at: corpus.url("rclone.conf"), to: folder.appendingPathComponent("rclone.conf"))
        let everyKey = #"""
            {"$schema": "\#(schema)", "schemaVersion": 1, "name": "every-key",
             "local": {"name": "phone", "label": "my phone", "kind": "store", "path": "../Samples/store/default.store", "readOnly": true,
                       "app": "group.com.example.sixtydmemo",
                       "model": {"entity": "Memo", "tagEntity": "Tag", "tagAttribute": "name",
                                 "attributes": {"modifiedAt": "updatedAt", "body": "text"}}},
             "remotes": [{"name": "drive", "label": "Google Drive", "kind": "rclone", "remote": "gdrive:60dMemo", "config": "rclone.conf",
                          "flags": ["--fast-list", "--tpslimit", "10", "--drive-scope=drive.readonly"],
                          "timeouts": {"connect": 15, "io": 60, "call": 600}, "transfers": 8},
                         {"name": "nas", "kind": "folder", "path": "../Samples/in-sync/drive"}],
             "check": "quick", "reports": {"dir": "../out/every/reports"}, "quarantine": {"dir": "../out/every/quarantine"},
             "state": {"dir": "../out/every/state"}, "cache": {"dir": "../out/every/cache"},
             "export": {"from": "drive", "formats": ["zip", "json", "zip"], "includeArchived": true, "dir": "../out/every/export", "keep": 3},
             "language": "ja", "timeZone": "Asia/Tokyo", "failOnDrift": true,
             "limits": {"memoBytes": 1048576, "indexBytes": 1.0e8, "nestingDepth": 64},
             "alarm": {"deletedPercent": 12.5, "deletedCount": 100}}
            """#
        var accepted = ["Pipelines/sample.json", "Pipelines/nightly.json", "Pipelines/drive.json"]
        for (name, text) in [
            ("every-key", everyKey),
            ("named-schema", Self.definition(top: #", "$schema": "https://reckon.invalid/schemas/pipeline.schema.json""#))
        ] {
            try Data(text.utf8).write(to: folder.appendingPathComponent("\(name).json"))
            accepted.append("defs/\(name).json")
        }
        var jobs: [SchemaJob] = []
        for path in accepted {
            try corpus.reckon(["validate", path], code: 0)
            jobs.append(SchemaJob(schema: "pipeline.schema.json", document: corpus.url(path).path))
        }
        var refusedJobs: [String: RefusedDefinition] = [:]
        for (number, refusal) in Self.refused.enumerated() {
            let path = "defs/refused-\(number).json"
            try Data(refusal.text.utf8).write(to: corpus.url(path))
            let result = try corpus.reckon(["validate", path], code: 64)
            #expect(result.stderr.contains("\(path): '\(refusal.key)' "), "\(refusal.testDescription): \(result.stderr)")
            jobs.append(SchemaJob(schema: "pipeline.schema.json", document: corpus.url(path).path))
            refusedJobs[corpus.url(path).path] = refusal
        }
        let verdicts = try validateWithSchemas(jobs)
        #expect(verdicts.schemas["pipeline.schema.json"] == .some(nil), "a draft 2020-12 schema")
        #expect(verdicts.documents.count == jobs.count)
        for document in verdicts.documents {
            if let refusal = refusedJobs[document.document] {
                #expect(!document.errors.isEmpty, "reckon refuses \(refusal.testDescription), the schema takes it")
            } else {
                #expect(document.errors.isEmpty, "\(document.document): \(document.errors.joined(separator: "; "))")
            }
        }
    }
}

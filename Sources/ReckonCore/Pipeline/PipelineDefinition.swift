import Foundation

/// Which check `reconcile` makes.
package enum CheckMode: String, Sendable, Codable, CaseIterable {
    /// Index entries, the folder listing and every memo file, field by field.
    case deep
    /// Index entries and the folder listing only.
    case quick
}

/// Formats an export can be written in.
package enum ExportFormat: String, Sendable, Codable, CaseIterable {
    case json
    case markdown
    case zip
}

/// Which side an export reads.
package enum ExportSource: Sendable, Equatable, CustomStringConvertible {
    case local
    /// The remote with this name, at this position among the definition's remotes.
    case remote(String, position: Int)

    /// `local` or the remote's name, as a definition spells it.
    package var description: String {
        switch self {
        case .local: "local"
        case .remote(let name, _): name
        }
    }
}

/// What to export, from which side, to where.
package struct ExportSpec: Sendable, Equatable {
    package var from: ExportSource
    package var formats: [ExportFormat]
    package var includeArchived: Bool
    /// The folder as the definition spells it, for reports.
    package var path: String
    package var dir: URL
    /// How many past exports to keep (used by the nightly job).
    package var keep: Int?
}

/// A pipeline definition: the sides, what to check, where reports and exports go.
package struct PipelineDefinition: Sendable, Equatable {
    package var name: String
    /// The file the definition was read from; nil for one made on the command line.
    package var file: URL?
    package var local: SideSpec
    package var remotes: [SideSpec]
    package var check: CheckMode
    /// Where report files are written; nil writes none.
    package var reportDir: URL?
    /// The report folder as the definition or the command line spells it.
    package var reportPath: String?
    /// Where unusable files are copied aside, and how the user spelled it
    /// (by default `quarantine/` in the report folder); nil copies nothing.
    package var quarantineDir: URL?
    package var quarantinePath: String?
    /// Where each side's baseline is kept between runs, and how the user
    /// spelled it (by default `state/` in the report folder); nil keeps none.
    package var stateDir: URL?
    package var statePath: String?
    /// Where each run writes its figures for monitoring (`metrics`, a
    /// `.prom` file), and how the user spelled it; nil writes none.
    package var metricsFile: URL?
    package var metricsPath: String?
    /// When vanished memos sound the alarm.
    package var alarm = AlarmLimits()
    /// Limits on what is read (sizes, JSON nesting).
    package var limits = ReadLimits()
    package var export: ExportSpec?
    package var language: String
    /// The IANA time zone reports show times in.
    package var timeZone = "UTC"
    /// How much of the memos the report pages show (`reports.content`).
    package var reportContent = ReportContent.full
    /// Whether drift makes `reckon run` exit 1.
    package var failOnDrift: Bool

    /// Makes every rclone side download its memo files again, ignoring its cache, for this run.
    package mutating func refreshCaches() {
        changeSides { $0.refreshCache() }
    }

    /// The definition that reads the local side and one remote, as `check`
    /// says, and copies nothing aside: what `plan` and `show` read.
    package func reading(remote: String, check: CheckMode) -> PipelineDefinition {
        var definition = self
        definition.check = check
        definition.remotes = remotes.filter { $0.name == remote }
        definition.quarantineDir = nil
        return definition
    }

    /// Gives every side the ways to a password it may ask for (an
    /// encrypted iPhone backup's): the command line's, and the side's own
    /// password file.
    package mutating func usePasswords(_ sources: PasswordSources) {
        local.kind.usePasswords(sources, shown: local.path)
        for index in remotes.indices { remotes[index].kind.usePasswords(sources, shown: remotes[index].path) }
    }

    /// Changes every side's kind.
    mutating func changeSides(_ change: (inout any SideKind) -> Void) {
        change(&local.kind)
        for index in remotes.indices { change(&remotes[index].kind) }
    }

    package init(
        name: String, local: SideSpec, remotes: [SideSpec], check: CheckMode = .deep, reportDir: URL? = nil,
        export: ExportSpec? = nil, language: String = "en", failOnDrift: Bool = false
    ) {
        self.name = name
        self.local = local
        self.remotes = remotes
        self.check = check
        self.reportDir = reportDir
        self.export = export
        self.language = language
        self.failOnDrift = failOnDrift
    }
}

extension PipelineDefinition {
    /// The pipeline's lock file, in the folder its reports go to (else its
    /// export's); nil when it writes nothing.
    package var lockURL: URL? {
        (reportDir ?? export?.dir)?.appendingPathComponent(".reckon.lock")
    }
}

/// A definition that cannot be used; names the file and the exact key.
package struct DefinitionError: Error, Equatable, CustomStringConvertible {
    package var file: String
    package var key: String?
    package var message: String

    package var description: String {
        if let key { return "\(file): '\(key)' \(message)" }
        return "\(file): \(message)"
    }
}

extension PipelineDefinition {
    /// The top level's keys. `$schema` names a JSON Schema for editors;
    /// reckon never reads or fetches it.
    package static let topKeys: Set<String> = [
        "$schema", "schemaVersion", "name", "local", "remotes", "check", "reports", "quarantine", "export", "language",
        "timeZone", "failOnDrift", "limits", "cache", "state", "alarm", "metrics"
    ]
    package static let limitKeys: Set<String> = ["memoBytes", "indexBytes", "nestingDepth"]
    /// A side's keys: those of every side, and those only one kind reads.
    package static let sideKeys = Set(["name", "label", "kind", "path", "readOnly"] + SideKinds.definitionKeys.map(\.name))
    package static let exportKeys: Set<String> = ["from", "formats", "includeArchived", "dir", "keep"]
    package static let reportKeys: Set<String> = ["dir"]
    /// The `reports` object's keys: its folder, and how much of the memos its pages show.
    package static let reportsKeys: Set<String> = ["dir", "content"]
    package static let alarmKeys: Set<String> = ["deletedPercent", "deletedCount"]

    /// Reads and checks a definition file. Relative paths in it are taken
    /// relative to the file's folder, so cron can run it from anywhere.
    /// `environment` names the one-shot cache of a remote when the
    /// definition gives no folder for it; `process`, where a temporary one goes.
    package static func load(
        from url: URL, displayPath: String, environment: [String: String], process: ProcessSettings = ProcessSettings()
    ) throws(DefinitionError) -> PipelineDefinition {
        let data: Data
        do {
            data = try readRegularFile(atPath: url.path, limit: 1 << 20)
        } catch {
            throw DefinitionError(file: displayPath, message: FileKind(path: url.path) == .missing ? "no such file" : error.message)
        }
        var definition = try parse(data, file: displayPath, base: url.deletingLastPathComponent(), environment: environment, process: process)
        definition.file = url
        return definition
    }

    /// Parses a definition; `base` is the folder relative paths start from.
    package static func parse(
        _ data: Data, file: String, base: URL, environment: [String: String] = [:], process: ProcessSettings = ProcessSettings()
    ) throws(DefinitionError) -> PipelineDefinition {
        let reader = DefinitionReader(file: file, base: base, environment: environment, process: process)
        return try reader.definition(reader.root(of: data))
    }
}

/// Walks a definition's JSON, naming the key path of anything wrong.
package struct DefinitionReader {
    let file: String
    let base: URL
    let environment: [String: String]
    /// Where a remote's one-shot cache goes when it is a temporary folder.
    var process = ProcessSettings()

    func fail(_ key: String?, _ message: String) -> DefinitionError {
        DefinitionError(file: file, key: key, message: message)
    }

    /// The file's JSON, read strictly: not JSON, or a key given twice in one object, is refused.
    func root(of data: Data) throws(DefinitionError) -> JSONValue {
        let root: JSONValue
        do {
            root = try JSONValue.parse(data)
        } catch {
            throw fail(nil, "is not valid JSON (\(describe(error)))")
        }
        if let repeated = JSONValue.firstRepeatedKey(in: data) { throw fail(repeated, "is given twice; give it once") }
        return root
    }

    /// An editor's pointer to the file's schema: a string, never read further.
    func schemaPointer(in top: [String: JSONValue]) throws(DefinitionError) {
        guard let schema = top["$schema"] else { return }
        guard case .string = schema else {
            throw fail("$schema", "must be a string (the address of a JSON Schema, which reckon ignores), found \(schema.typeName)")
        }
    }

    func object(_ value: JSONValue?, _ key: String?, allowed: Set<String>) throws(DefinitionError) -> [String: JSONValue] {
        guard case .object(let object)? = value else {
            throw fail(key, "must be an object, found \(value?.typeName ?? "nothing")")
        }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            let full = key.map { "\($0).\(unknown)" } ?? unknown
            throw fail(full, "is not a known key (known: \(allowed.sorted().joined(separator: ", ")))")
        }
        return object
    }

    func string(_ object: [String: JSONValue], _ name: String, in parent: String?, required: Bool) throws(DefinitionError) -> String? {
        let key = parent.map { "\($0).\(name)" } ?? name
        switch object[name] {
        case nil where required: throw fail(key, "is missing")
        case nil: return nil
        case .string(let value)?:
            guard !value.isEmpty else { throw fail(key, "must not be empty") }
            // A path holding NUL names no file: a run would read it cut short, or not at all.
            if Self.pathKeys.contains(name), value.contains("\0") { throw fail(key, "holds a NUL character, which no file name can hold") }
            return value
        case let other?: throw fail(key, "must be a string, found \(other.typeName)")
        }
    }

    /// The keys whose values are paths: a side's, an output's, and those the kinds read.
    static let pathKeys = Set(["path", "dir"] + SideKinds.definitionKeys.filter { $0.holds == .path }.map(\.name))

    func bool(_ object: [String: JSONValue], _ name: String, in parent: String?) throws(DefinitionError) -> Bool? {
        let key = parent.map { "\($0).\(name)" } ?? name
        switch object[name] {
        case nil: return nil
        case .bool(let value)?: return value
        case let other?: throw fail(key, "must be true or false, found \(other.typeName)")
        }
    }

    func url(_ path: String) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appendingPathComponent(path).standardizedFileURL
    }

    /// An output folder: its real path, so that what is checked against
    /// the sources is what is written to.
    func outputURL(_ path: String) -> URL { outputFolder(path, from: base.path) }

    func side(_ value: JSONValue?, _ key: String, role: SideRole, defaultName: String, defaultLabel: String) throws(DefinitionError) -> SideSpec {
        let object = try object(value, key, allowed: PipelineDefinition.sideKeys)
        let name = try string(object, "name", in: key, required: false) ?? defaultName
        guard name.wholeMatch(of: /[a-z0-9][a-z0-9_-]{0,31}/) != nil else {
            throw fail("\(key).name", "must be 1 to 32 small letters, digits, '-' or '_', starting with a letter or digit, found \(quoted(name))")
        }
        let kindName = try string(object, "kind", in: key, required: false) ?? SideKinds.names[0]
        guard let kind = SideKinds.named(kindName) else {
            throw fail("\(key).kind", "must be one of \(SideKinds.names.joined(separator: ", ")), found \"\(kindName)\"")
        }
        let label = try string(object, "label", in: key, required: false) ?? defaultLabel
        for other in SideKinds.all where other.name != kind.name {
            let own = Set(kind.definitionKeys.map(\.name))
            if let wrong = other.definitionKeys.map(\.name).first(where: { object[$0] != nil && !own.contains($0) }) {
                throw fail("\(key).\(wrong)", "is read only for a side of kind \"\(other.name)\"")
            }
        }
        let readOnly = try bool(object, "readOnly", in: key) ?? false
        let (path, read) = try kind.read(object, key: key, with: self)
        var side = SideSpec(role: role, name: name, label: label, path: path, kind: read)
        side.readOnly = readOnly
        return side
    }

    func definition(_ root: JSONValue) throws(DefinitionError) -> PipelineDefinition {
        let top = try object(root, nil, allowed: PipelineDefinition.topKeys)
        try schemaPointer(in: top)
        if let version = top["schemaVersion"], version.double != 1 {
            throw fail("schemaVersion", "must be 1, the version this reckon reads")
        }
        let name = try string(top, "name", in: nil, required: false) ?? "pipeline"
        let language = try string(top, "language", in: nil, required: false) ?? "en"
        guard Strings.languages.contains(language) else {
            throw fail("language", "must be one of \(Strings.languages.joined(separator: ", ")), found \"\(language)\"")
        }
        let timeZone = try string(top, "timeZone", in: nil, required: false) ?? "UTC"
        guard TimeZone(identifier: timeZone) != nil else {
            throw fail("timeZone", "must be an IANA time zone such as \"UTC\" or \"Asia/Tokyo\", found \"\(timeZone)\"")
        }
        let (local, remotes) = try sides(top, strings: Strings.forLanguage(language))

        var check = CheckMode.deep
        if let text = try string(top, "check", in: nil, required: false) {
            guard let mode = CheckMode(rawValue: text) else { throw fail("check", "must be \"deep\" or \"quick\", found \"\(text)\"") }
            check = mode
        }
        let outputs = try outputs(top)
        let alarm = try alarm(top)
        let limits = try limits(top)

        var export: ExportSpec?
        if top["export"] != nil {
            export = try exportSpec(top["export"], local: local, remotes: remotes)
        }

        // Each rclone side's cache: `cache.dir`, or `cache/` in the report folder.
        var cache: (URL, Bool)?
        if top["cache"] != nil {
            let object = try object(top["cache"], "cache", allowed: PipelineDefinition.reportKeys)
            cache = (outputURL(try string(object, "dir", in: "cache", required: true)!), false)
        }

        var definition = PipelineDefinition(
            name: name, local: local, remotes: remotes, check: check, reportDir: outputs.reportDir, export: export,
            language: language, failOnDrift: try bool(top, "failOnDrift", in: nil) ?? false)
        definition.reportPath = outputs.reportPath
        definition.quarantineDir = outputs.quarantine?.0
        definition.quarantinePath = outputs.quarantine?.1
        definition.stateDir = outputs.state?.0
        definition.statePath = outputs.state?.1
        definition.metricsFile = outputs.metrics?.0
        definition.metricsPath = outputs.metrics?.1
        definition.alarm = alarm
        definition.limits = limits
        definition.timeZone = timeZone
        definition.reportContent = outputs.content
        if ([local] + remotes).contains(where: \.kind.needsCache) {
            let (dir, temporary) =
                cache ?? outputs.reportDir.map { ($0.appendingPathComponent("cache"), false) }
                ?? SideKinds.oneShotCache(environment: environment, process: process)
            definition.changeSides { $0.useCache(dir, temporary: temporary) }
        }
        return definition
    }

    /// The local side and the remotes, each named once.
    func sides(_ top: [String: JSONValue], strings: Strings) throws(DefinitionError) -> (local: SideSpec, remotes: [SideSpec]) {
        let local = try side(top["local"], "local", role: .local, defaultName: "local", defaultLabel: strings.defaultLocalLabel)
        guard case .array(let remoteValues)? = top["remotes"] else {
            throw fail("remotes", top["remotes"] == nil ? "is missing" : "must be an array of remotes, found \(top["remotes"]!.typeName)")
        }
        guard !remoteValues.isEmpty else { throw fail("remotes", "must name at least one remote") }
        var remotes: [SideSpec] = []
        for (position, value) in remoteValues.enumerated() {
            let remote = try side(
                value, "remotes[\(position)]", role: .remote, defaultName: "remote\(position + 1)",
                defaultLabel: strings.defaultRemoteLabel)
            if remote.name == local.name || remotes.contains(where: { $0.name == remote.name }) {
                throw fail("remotes[\(position)].name", "'\(remote.name)' is already the name of another side")
            }
            remotes.append(remote)
        }
        return (local, remotes)
    }

    /// Where a definition's outputs go, each with how it spells the path.
    struct Outputs {
        var reportDir: URL?
        var reportPath: String?
        var content = ReportContent.full
        var quarantine: (URL, String)?
        var state: (URL, String)?
        var metrics: (URL, String)?
    }

    /// The report folder (with the quarantine and state folders in it by
    /// default), the quarantine and state folders named apart, and the metrics file.
    func outputs(_ top: [String: JSONValue]) throws(DefinitionError) -> Outputs {
        var outputs = Outputs()
        if top["reports"] != nil {
            let reports = try object(top["reports"], "reports", allowed: PipelineDefinition.reportsKeys)
            let path = try string(reports, "dir", in: "reports", required: true)!
            if let text = try string(reports, "content", in: "reports", required: false) {
                guard let value = ReportContent(rawValue: text) else {
                    throw fail("reports.content", "must be \"full\", \"titles\" or \"none\", found \"\(text)\"")
                }
                outputs.content = value
            }
            outputs.reportDir = outputURL(path)
            outputs.reportPath = path
            outputs.quarantine = (outputURL(path).appendingPathComponent("quarantine"), joinPath(path, "quarantine"))
            outputs.state = (outputURL(path).appendingPathComponent("state"), joinPath(path, "state"))
        }
        /// A folder named by `<key>.dir`, if the definition names one.
        func folder(_ key: String) throws(DefinitionError) -> (URL, String)? {
            guard top[key] != nil else { return nil }
            let object = try object(top[key], key, allowed: PipelineDefinition.reportKeys)
            let path = try string(object, "dir", in: key, required: true)!
            return (outputURL(path), path)
        }
        outputs.quarantine = try folder("quarantine") ?? outputs.quarantine
        outputs.state = try folder("state") ?? outputs.state
        if let path = try string(top, "metrics", in: nil, required: false) {
            if let reason = PipelineDefinition.metricsFileProblem(path) { throw fail("metrics", reason) }
            outputs.metrics = (outputFileURL(path, from: base.path), path)
        }
        return outputs
    }

    /// When vanished memos sound the alarm (`alarm`).
    func alarm(_ top: [String: JSONValue]) throws(DefinitionError) -> AlarmLimits {
        var alarm = AlarmLimits()
        guard top["alarm"] != nil else { return alarm }
        let object = try object(top["alarm"], "alarm", allowed: PipelineDefinition.alarmKeys)
        if let value = object["deletedPercent"] {
            guard let percent = value.double, percent > 0, percent < 100 else {
                throw fail("alarm.deletedPercent", "must be a number greater than 0 and less than 100 (the alarm cannot be switched off)")
            }
            alarm.deletedPercent = percent
        }
        if let value = object["deletedCount"] {
            guard let count = value.double, count == count.rounded(), count >= 1, count <= 1e9 else {
                throw fail("alarm.deletedCount", "must be a whole number from 1 to 1000000000")
            }
            alarm.deletedCount = Int(count)
        }
        return alarm
    }

    /// Limits on what is read (`limits`).
    func limits(_ top: [String: JSONValue]) throws(DefinitionError) -> ReadLimits {
        var limits = ReadLimits()
        guard top["limits"] != nil else { return limits }
        let object = try object(top["limits"], "limits", allowed: PipelineDefinition.limitKeys)
        func number(_ name: String, _ range: ClosedRange<Double>) throws(DefinitionError) -> Double? {
            guard let value = object[name] else { return nil }
            guard let n = value.double, n == n.rounded(), range.contains(n) else {
                throw fail("limits.\(name)", "must be a whole number from \(Int(range.lowerBound)) to \(Int64(range.upperBound))")
            }
            return n
        }
        if let n = try number("memoBytes", 1...Double(1 << 40)) { limits.memoSizeLimit = Int64(n) }
        if let n = try number("indexBytes", 1...Double(1 << 40)) { limits.indexSizeLimit = Int64(n) }
        if let n = try number("nestingDepth", 2...10_000) { limits.depthLimit = Int(n) }
        return limits
    }

    func exportSpec(_ value: JSONValue?, local: SideSpec, remotes: [SideSpec]) throws(DefinitionError) -> ExportSpec {
        let object = try object(value, "export", allowed: PipelineDefinition.exportKeys)
        let name = try string(object, "from", in: "export", required: false) ?? "local"
        let position = name == "local" ? nil : remotes.firstIndex { $0.name == name }
        guard name == "local" || position != nil else {
            throw fail("export.from", "must be \"local\" or the name of a remote (\(remotes.map(\.name).joined(separator: ", "))), found \"\(name)\"")
        }
        let from: ExportSource = position.map { .remote(name, position: $0) } ?? .local
        var formats = ExportFormat.allCases
        if let value = object["formats"] {
            guard case .array(let items) = value, !items.isEmpty else { throw fail("export.formats", "must be a non-empty array of format names") }
            formats = []
            for (position, item) in items.enumerated() {
                guard case .string(let text) = item, let format = ExportFormat(rawValue: text) else {
                    throw fail("export.formats[\(position)]", "must be one of \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if !formats.contains(format) { formats.append(format) }
            }
        }
        let path = try string(object, "dir", in: "export", required: true)!
        var keep: Int?
        if let value = object["keep"] {
            guard let number = value.double, number == number.rounded(), number >= 1, number <= 10_000 else {
                throw fail("export.keep", "must be a whole number from 1 to 10000")
            }
            keep = Int(number)
        }
        return ExportSpec(
            from: from, formats: formats, includeArchived: try bool(object, "includeArchived", in: "export") ?? false,
            path: path, dir: outputURL(path), keep: keep)
    }
}

extension PipelineDefinition {
    /// Why `path` cannot name a metrics file, or nil when it can:
    /// node_exporter's textfile collector reads only `*.prom` files.
    package static func metricsFileProblem(_ path: String) -> String? {
        let name = URL(fileURLWithPath: path).lastPathComponent
        guard name.hasSuffix(".prom"), name.count > 5, !path.hasSuffix("/") else {
            return "must name a file ending in .prom (node_exporter's textfile collector reads only those), found \"\(path)\""
        }
        return nil
    }

    /// Refuses a metrics file that would land in reckon's own keeping: in
    /// the export folder, whose run folders are kept whole (a path through
    /// `latest` leads into one), or over the definition itself.
    func checkMetricsFile(file: String) throws(DefinitionError) {
        guard let metrics = metricsFile.map({ realPath($0.path) }) else { return }
        let shown = metricsPath ?? metrics
        if let export, isWithin(metrics, realPath(export.dir.path)) {
            throw DefinitionError(
                file: file, key: "metrics",
                message: "is \(shown), inside export.dir \(export.path), whose run folders reckon writes and removes whole; name a file elsewhere")
        }
        if let definition = self.file, metrics == realPath(definition.path) {
            throw DefinitionError(file: file, key: "metrics", message: "is \(shown), the definition itself; name a file of its own")
        }
    }

    /// Writes each run's metrics to `url`, spelled `path` on the command
    /// line (`--metrics`), instead of the file the definition names; `file`
    /// names the definition in errors.
    package mutating func writeMetrics(to url: URL, path: String, file: String) throws(DefinitionError) {
        if let reason = PipelineDefinition.metricsFileProblem(path) { throw DefinitionError(file: file, key: "--metrics", message: reason) }
        metricsFile = url
        metricsPath = path
        try checkOutputsOutsideSources(file: file)
    }

    /// Refuses an output folder inside a source folder: nothing is ever
    /// written into a source. Paths are compared by their real paths, with
    /// every link resolved, so a linked parent, a `..` after a link or a
    /// link inside the output path cannot lead into a source.
    package func checkOutputsOutsideSources(file: String) throws(DefinitionError) {
        let outputs: [(key: String, path: String?, url: URL?)] = [
            ("reports.dir", reportPath, reportDir), ("quarantine.dir", quarantinePath, quarantineDir),
            ("state.dir", statePath, stateDir), ("export.dir", export?.path, export?.dir), ("metrics", metricsPath, metricsFile),
            ("cache.dir", nil, ([local] + remotes).lazy.compactMap(\.kind.lastingCache).first)
        ]
        for output in outputs {
            guard let url = output.url else { continue }
            let out = realPath(url.path)
            for side in [local] + remotes {
                guard let source = side.kind.localURL.map({ realPath($0.path) }), isWithin(out, source) else { continue }
                let shown = output.path ?? url.path
                // A store file's folder is its source too: SQLite keeps its -wal and -shm there.
                let folder = side.kind.sourceFolder(shown: side.path)
                throw DefinitionError(
                    file: file, key: output.key,
                    message: "is \(shown), inside \(folder)\(out == shown ? "" : " (its real path is \(out))"); reckon never writes into a source")
            }
        }
        try checkMetricsFile(file: file)
        // The state folder's own folders (plans/, apply/, backups/) would meet a side kept inside it.
        if let state = stateDir.map({ realPath($0.path) }),
            let side = ([local] + remotes).first(where: { $0.kind.localURL.map { isWithin(realPath($0.path), state) } == true })
        {
            throw DefinitionError(
                file: file, key: "state.dir",
                message:
                    "is \(statePath ?? state), which holds the source folder \(side.path); reckon keeps its plans, journals and backups apart from every source"
            )
        }
    }
}

extension PipelineDefinition {
    /// What `reckon validate` checks beyond reading the file, without the
    /// network (an rclone remote's name against rclone's config): the first
    /// side found wrong, then what was checked and what only a run can tell.
    /// `process` gives rclone its environment.
    package func checkOffline(file: String, process: ProcessSettings) -> (wrong: DefinitionError?, checked: [String], notChecked: [String]) {
        var result: (wrong: DefinitionError?, checked: [String], notChecked: [String]) = (nil, [], [])
        for (key, side) in [("local", local)] + remotes.enumerated().map({ ("remotes[\($0.offset)]", $0.element) }) {
            let check = side.kind.offlineCheck(shown: side.path, process: process)
            if result.wrong == nil, let wrong = check.wrong {
                result.wrong = DefinitionError(file: file, key: check.key.map { "\(key).\($0)" } ?? key, message: wrong)
            }
            result.checked += check.checked
            result.notChecked += check.notChecked
        }
        return result
    }
}

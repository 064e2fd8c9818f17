import Foundation
import ReckonCore
import SeededGenerator
import TestSupport
import Testing

/// The direction rule as a reference model, written apart from the code it
/// checks: each side holds each memo absent, soft-deleted or live (a
/// version, archived or not), and the pair remembers what both last held
/// equal. A deep run records every memo it sees equal; apply records what
/// it makes equal; undo puts back what it undoes. A plan follows the one
/// side that changed a memo since that agreement, and leaves to a person a
/// memo both changed, or neither; a memo never agreed on follows the one
/// side that holds it, else a person chooses.
struct DirectionModel {
    enum State: Equatable {
        case absent
        case deleted(version: Int)
        case live(version: Int, archived: Bool)

        var isLive: Bool { if case .live = self { true } else { false } }
        var version: Int? {
            switch self {
            case .absent: nil
            case .deleted(let version), .live(let version, _): version
            }
        }
    }

    enum Action: Equatable, CustomStringConvertible {
        case follow(from: SideRole)
        case conflict
        var description: String {
            switch self {
            case .follow(let from): "follow \(from.rawValue)"
            case .conflict: "conflict"
            }
        }
    }

    var sides: [SideRole: [State]]
    var agreed: [Int: [SideRole: State]] = [:]

    init(memos: Int) { sides = [.local: Array(repeating: .absent, count: memos), .remote: Array(repeating: .absent, count: memos)] }

    /// Equal as a person sees it: neither holds it live, or both hold the same version.
    static func same(_ a: State, _ b: State) -> Bool { (!a.isLive && !b.isLive) || a == b }

    func state(_ role: SideRole, _ memo: Int) -> State { sides[role]![memo] }

    mutating func deepRun() {
        for memo in sides[.local]!.indices where Self.same(state(.local, memo), state(.remote, memo)) {
            let both = [SideRole.local: state(.local, memo), .remote: state(.remote, memo)]
            agreed[memo] = both.values.allSatisfy { $0 == .absent } ? nil : both
        }
    }

    func plan(takes: [Int: SideRole]) -> [Int: Action] {
        var actions: [Int: Action] = [:]
        for memo in sides[.local]!.indices {
            let (l, r) = (state(.local, memo), state(.remote, memo))
            guard !Self.same(l, r) else { continue }
            if let take = takes[memo] {
                actions[memo] = .follow(from: take)
            } else if let then = agreed[memo] {
                let moved = [SideRole.local, .remote].filter { !Self.same(then[$0]!, state($0, memo)) }
                actions[memo] = moved.count == 1 ? .follow(from: moved[0]) : .conflict
            } else if r == .absent && l.isLive {
                actions[memo] = .follow(from: .local)
            } else if l == .absent && r.isLive {
                actions[memo] = .follow(from: .remote)
            } else {
                actions[memo] = .conflict
            }
        }
        return actions
    }

    /// Carries out `actions` where the side to write can be written; gives what each side held before, for undo.
    mutating func apply(_ actions: [Int: Action], writable: Set<SideRole>) -> [SideRole: [Int: State]] {
        var before: [SideRole: [Int: State]] = [:]
        for (memo, action) in actions {
            guard case .follow(let from) = action, writable.contains(from.other) else { continue }
            let to = from.other
            before[to, default: [:]][memo] = state(to, memo)
            sides[to]![memo] = state(from, memo).isLive ? state(from, memo) : .deleted(version: state(to, memo).version!)
            agreed[memo] = [.local: state(.local, memo), .remote: state(.remote, memo)]
        }
        return before
    }
}

/// One random sequence's steps, said so that a failure prints what led to it.
struct ModelSequence {
    var steps: [String] = []
    var description: String { steps.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n") }
}

/// What a driver does with the real sides: the library called in process,
/// or the built binary.
protocol SidesDriver {
    /// Writes one side as the model holds it.
    func write(_ role: SideRole, _ states: [DirectionModel.State]) throws
    func run(deep: Bool, at time: Timestamp) throws
    /// Plans with `takes`; gives each action's memo and, as the model says it, its action (nil: one the model has no word for).
    func plan(takes: [Int: SideRole], at time: Timestamp) throws -> [Int: DirectionModel.Action?]
    /// Applies the last plan; with `stopAt`, the apply is killed at that journal line first and resumed. Gives the run's id.
    func apply(at time: Timestamp, stopAt: Int?) throws -> String
    func undo(_ run: String, at time: Timestamp) throws
}

/// Random sequences of edits, runs, plans, applies and undos on both
/// sides, each plan checked against the model.
struct ModelRunner {
    static let ids = (1...4).map { String(format: "5eed0000-0000-4000-8000-%012d", $0) }
    var random: SeededRandom
    var localIsStore: Bool
    var stopsApplies = false

    /// Runs one sequence of `length` steps; records an issue naming the sequence on the first difference.
    mutating func sequence(_ driver: some SidesDriver, length: Int, name: String) throws {
        var model = DirectionModel(memos: Self.ids.count)
        var log = ModelSequence()
        var version = 0
        var time = Timestamp(seconds: 1_764_547_200)
        var lastApply: (run: String, before: [SideRole: [Int: DirectionModel.State]], agreed: [Int: [SideRole: DirectionModel.State]?])?
        var dirty: Set<SideRole> = []
        let writable: Set<SideRole> = localIsStore ? [.remote] : [.local, .remote]
        // A start: some memos the same on both sides, perhaps seen so by a deep run.
        for memo in Self.ids.indices where Bool.random(using: &random) {
            version += 1
            for role in [SideRole.local, .remote] { model.sides[role]![memo] = .live(version: version, archived: false) }
        }
        for role in [SideRole.local, .remote] { try driver.write(role, model.sides[role]!) }
        log.steps.append("start: \(model.sides[.local]!)")
        if Bool.random(using: &random) {
            try driver.run(deep: true, at: time)
            model.deepRun()
            log.steps.append("deep run")
        }
        for _ in 0..<length {
            time = Timestamp(seconds: time.seconds + 3_600)
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 50 {
                let role: SideRole = Bool.random(using: &random) ? .local : .remote
                let memo = Int.random(in: 0..<Self.ids.count, using: &random)
                let now = model.state(role, memo)
                version += 1
                let next: DirectionModel.State
                let what: String
                switch (Int.random(in: 0..<4, using: &random), now) {
                case (1, .live(let v, let archived)):
                    (next, what) = (.live(version: v, archived: !archived), archived ? "unarchive" : "archive")
                case (2, .live(let v, _)): (next, what) = (.deleted(version: v), "soft-delete")
                case (3, .live), (3, .deleted): (next, what) = (.absent, "remove")
                default:
                    let archived = if case .live(_, let a) = now { a } else { false }
                    (next, what) = (.live(version: version, archived: archived), now == .absent ? "create" : "edit")
                }
                model.sides[role]![memo] = next
                try driver.write(role, model.sides[role]!)
                dirty.insert(role)
                log.steps.append("\(what) memo \(memo) on \(role.rawValue) → \(next)")
            } else if roll < 70 {
                let deep = roll < 65
                try driver.run(deep: deep, at: time)
                if deep { model.deepRun() }
                log.steps.append(deep ? "deep run" : "quick run")
            } else if roll < 93 {
                var takes: [Int: SideRole] = [:]
                for (memo, action) in model.plan(takes: [:]) where action == .conflict && Bool.random(using: &random) {
                    takes[memo] = Bool.random(using: &random) ? .local : .remote
                }
                let expected = model.plan(takes: takes)
                let actual = try driver.plan(takes: takes, at: time)
                log.steps.append("plan\(takes.isEmpty ? "" : " taking \(takes.sorted { $0.key < $1.key })"): \(expected.sorted { $0.key < $1.key })")
                guard actual.mapValues({ $0 }) == expected.mapValues({ Optional($0) }) else {
                    Issue.record("\(name): the plan's actions \(actual.sorted { $0.key < $1.key }) are not the model's after:\n\(log.description)")
                    return
                }
                let writes = expected.values.contains { if case .follow(let from) = $0 { writable.contains(from.other) } else { false } }
                if Int.random(in: 0..<10, using: &random) < 7 && writes {
                    let stop = stopsApplies && Bool.random(using: &random) ? Int.random(in: 2...6, using: &random) : nil
                    let agreedBefore = Dictionary(uniqueKeysWithValues: expected.keys.map { ($0, model.agreed[$0]) })
                    let run = try driver.apply(at: time, stopAt: stop)
                    let before = model.apply(expected, writable: writable)
                    lastApply = (run, before, agreedBefore)
                    dirty = []
                    log.steps.append("apply" + (stop.map { " stopped at journal line \($0), resumed" } ?? ""))
                }
            } else if let applied = lastApply, dirty.isDisjoint(with: applied.before.keys) {
                // Undone before anyone edits a side it wrote (undo of an edited side is the repair tests'):
                // every memo it wrote goes back, and so does what the pair agreed on it.
                try driver.undo(applied.run, at: time)
                for (role, states) in applied.before {
                    for (memo, state) in states { model.sides[role]![memo] = state }
                }
                for (memo, agreed) in applied.agreed where applied.before.values.contains(where: { $0[memo] != nil }) {
                    model.agreed[memo] = agreed
                }
                lastApply = nil
                log.steps.append("undo")
            }
        }
    }
}

/// A memo file and its index entry for a model state, the same bytes on
/// either side for the same state: times whole seconds, set by the version.
enum ModelMemo {
    static func times(_ version: Int) -> (modified: String, archived: String, deleted: String) {
        let base = 1_775_000_000 + version * 600
        return (iso(base), iso(base + 60), iso(base + 120))
    }

    static func iso(_ seconds: Int) -> String { Timestamp(seconds: Int64(seconds)).iso8601 }

    static func folder(_ url: URL, _ states: [DirectionModel.State]) throws {
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url.appendingPathComponent("memos"), withIntermediateDirectories: true)
        var entries: [String] = []
        for (memo, state) in states.enumerated() {
            guard let version = state.version else { continue }
            let id = ModelRunner.ids[memo]
            let t = times(version)
            let archived = if case .live(_, true) = state { "\"\(t.archived)\"" } else { "null" }
            let deleted = if case .deleted = state { "\"\(t.deleted)\"" } else { "null" }
            entries.append(#"{"id": "\#(id)", "modifiedTime": "\#(t.modified)", "archivedAt": \#(archived), "deletedAt": \#(deleted)}"#)
            let file =
                #"{"id": "\#(id)", "title": "Memo \#(memo)", "body": "version \#(version)", "createdAt": "2026-01-01T00:00:00Z", "modifiedAt": "\#(t.modified)", "archivedAt": \#(archived), "deletedAt": \#(deleted), "tags": [], "pinned": false}"#
            try Data(file.utf8).write(to: url.appendingPathComponent("memos/\(id).json"))
        }
        try Data(#"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ", "))]}"#.utf8).write(
            to: url.appendingPathComponent("index.json"))
    }

    static func store(_ path: String, _ states: [DirectionModel.State]) throws {
        let rows = states.enumerated().compactMap { memo, state -> StoreBuilder.Row? in
            guard let version = state.version else { return nil }
            let t = times(version)
            let archived: String? = if case .live(_, true) = state { t.archived } else { nil }
            let deleted: String? = if case .deleted = state { t.deleted } else { nil }
            return StoreBuilder.memo(
                ModelRunner.ids[memo], title: "Memo \(memo)", body: "version \(version)", modified: t.modified, created: "2026-01-01T00:00:00Z",
                archived: archived, deleted: deleted)
        }
        try StoreBuilder().make(at: path, rows: rows)
    }

    /// The model's word for a plan action: which side it follows, or a conflict.
    static func action(_ action: PlanAction) -> DirectionModel.Action? {
        switch action.action {
        case .copy, .softDelete: action.from.map { .follow(from: $0) }
        case .notPossible: action.to.map { .follow(from: $0.other) }
        case .conflict: .conflict
        default: nil
        }
    }

    static func memo(of id: MemoID) -> Int { ModelRunner.ids.firstIndex { MemoID($0) == id }! }
}

/// The library, called in process: the pipeline for runs and plans, the applier, the undoer.
struct LibraryDriver: SidesDriver {
    let folder: URL
    let localIsStore: Bool
    var localPath: String { folder.appendingPathComponent(localIsStore ? "store/default.store" : "local").path }
    var state: URL { folder.appendingPathComponent("out/state") }

    func write(_ role: SideRole, _ states: [DirectionModel.State]) throws {
        if role == .local && localIsStore {
            try ModelMemo.store(localPath, states)
        } else {
            try ModelMemo.folder(folder.appendingPathComponent(role.rawValue), states)
        }
    }

    func definition(deep: Bool) -> PipelineDefinition {
        let local =
            localIsStore
            ? storeSide(localPath)
            : SideSpec(role: .local, name: "local", label: "this device", path: localPath, kind: .folder(URL(fileURLWithPath: localPath)))
        let remotePath = folder.appendingPathComponent("remote").path
        let remote = SideSpec(role: .remote, name: "remote", label: "Google Drive", path: remotePath, kind: .folder(URL(fileURLWithPath: remotePath)))
        var definition = PipelineDefinition(
            name: "model", local: local, remotes: [remote], check: deep ? .deep : .quick, reportDir: folder.appendingPathComponent("out"))
        (definition.stateDir, definition.statePath) = (state, "out/state")
        return definition
    }

    func run(deep: Bool, at time: Timestamp) throws {
        _ = Pipeline(startedAt: time).run(definition(deep: deep), context: RunContext())
    }

    func plan(takes: [Int: SideRole], at time: Timestamp) throws -> [Int: DirectionModel.Action?] {
        let request = ChoiceRequest(
            takes: try takes.map { (try MemoIDPrefix(ModelRunner.ids[$0.key]), $0.value == .local ? ConflictChoices.Take.local : .remote, nil) },
            pipeline: "model")
        let plan = try Pipeline(startedAt: time).plan(
            definition(deep: true), remote: "remote", choices: request, stateDir: state, context: RunContext())
        try plan.write(into: folder.appendingPathComponent("out"))
        return Dictionary(uniqueKeysWithValues: plan.actions.map { (ModelMemo.memo(of: $0.id), ModelMemo.action($0)) })
    }

    func apply(at time: Timestamp, stopAt: Int?) throws -> String {
        let url = folder.appendingPathComponent("out/plan.json")
        let data = try Data(contentsOf: url)
        var options = Applier.Options(now: time, environment: [:])
        options.confirmed = true
        options.maxDeletePercent = 100
        let result = try Applier(plan: try Plan.read(url, shown: "plan.json"), planData: data, options: options).run(confirm: { true })
        #expect(!result.trouble, "apply: \(result)")
        return result.run
    }

    func undo(_ run: String, at time: Timestamp) throws {
        let result = try Undoer.undo(run: run, stateDir: state, environment: [:])
        #expect(!result.trouble, "undo: \(result)")
    }
}

/// The built binary, as a person runs it.
struct BinaryDriver: SidesDriver {
    let library: LibraryDriver

    func write(_ role: SideRole, _ states: [DirectionModel.State]) throws { try library.write(role, states) }

    func reckon(_ arguments: [String], at time: Timestamp, environment: [String: String] = [:]) throws -> RunResult {
        var environment = environment
        environment["SOURCE_DATE_EPOCH"] = String(time.seconds)
        return try runArray(arguments, environment: environment, in: library.folder)
    }

    var sides: [String] { ["--local", library.localPath, "--remote", "remote", "--out", "out"] }

    func run(deep: Bool, at time: Timestamp) throws {
        let result = try reckon(["reconcile"] + sides + (deep ? [] : ["--quick"]), at: time)
        // 2 when memos vanished past the deletion alarm: the alarm holds the baselines, never the agreement.
        #expect([0, 1, 2].contains(result.code) && result.stderr.isEmpty, "reconcile: \(result.stderr)")
    }

    func plan(takes: [Int: SideRole], at time: Timestamp) throws -> [Int: DirectionModel.Action?] {
        let takeWords = takes.sorted { $0.key < $1.key }.flatMap { ["--take", "\(ModelRunner.ids[$0.key])=\($0.value.rawValue)"] }
        let result = try reckon(["plan"] + sides + takeWords, at: time)
        #expect([0, 1].contains(result.code), "plan: \(result.stderr)")
        let plan = try Plan.read(library.folder.appendingPathComponent("out/plan.json"), shown: "plan.json")
        return Dictionary(uniqueKeysWithValues: plan.actions.map { (ModelMemo.memo(of: $0.id), ModelMemo.action($0)) })
    }

    func apply(at time: Timestamp, stopAt: Int?) throws -> String {
        let arguments = ["apply", "out/plan.json", "--yes", "--max-delete", "100", "--json"]
        if let stopAt {
            let killed = try reckon(arguments, at: time, environment: ["RECKON_TEST_STOP_AT": "journal:\(stopAt)"])
            if killed.code != 0 {
                let resumed = try reckon(arguments + ["--resume"], at: time)
                #expect([0, 1].contains(resumed.code), "apply --resume after a kill at journal line \(stopAt): \(resumed.stderr)")
                return try json(resumed.stdout)["run"] as! String
            }
            return try json(killed.stdout)["run"] as! String
        }
        let result = try reckon(arguments, at: time)
        // 1 when the plan left conflicts, or actions not possible on the store.
        #expect([0, 1].contains(result.code), "apply: \(result.stderr)")
        return try json(result.stdout)["run"] as! String
    }

    func undo(_ run: String, at time: Timestamp) throws {
        let result = try reckon(["undo", run, "--state", "out/state"], at: time)
        #expect([0, 1].contains(result.code), "undo: \(result.stderr)")
    }
}

@Suite struct AgreementModelTests {
    /// 1,000 sequences through the library: 700 over two memo folders, 300
    /// over the app's store against a folder (the store rebuilt with the
    /// tests' store builder; apply never writes it).
    @Test func everyPlanFollowsTheModelThroughTheLibrary() throws {
        var random = TestSeed.generator()
        for index in 0..<1_000 {
            let store = index >= 700
            let folder = scratchFolder("model")
            defer { removeTree(folder.path) }
            var runner = ModelRunner(random: SeededRandom(seed: random.next()), localIsStore: store)
            try runner.sequence(LibraryDriver(folder: folder, localIsStore: store), length: 14, name: "library sequence \(index)")
        }
    }

    /// 50 sequences through the built binary, some applies killed at a
    /// journal line and resumed.
    @Test func everyPlanFollowsTheModelThroughTheBinary() throws {
        var random = TestSeed.generator()
        for index in 0..<50 {
            let store = index % 4 == 3
            let folder = scratchFolder("model-binary")
            defer { removeTree(folder.path) }
            var runner = ModelRunner(random: SeededRandom(seed: random.next()), localIsStore: store, stopsApplies: true)
            try runner.sequence(
                BinaryDriver(library: LibraryDriver(folder: folder, localIsStore: store)), length: 10, name: "binary sequence \(index)")
        }
    }
}

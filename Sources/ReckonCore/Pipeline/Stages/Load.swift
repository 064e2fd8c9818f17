import Foundation

extension Pipeline {
    /// Reads every side on its own, all at once (one failing does not
    /// discard the others), and keeps the store that read each one for the
    /// stages after it.
    package static var loading: Stage<PipelineDefinition, LoadedSides> {
        Stage("load") { definition, run in
            let context = run.context
            let deep = definition.check == .deep
            let specs = [definition.local] + definition.remotes
            for spec in specs { context.note("reading \(spec.label)") }
            let stores = specs.map { $0.store(limits: definition.limits) }
            // A side still being read once the others are done reads on every core.
            let sides = eachOnAThreadOfItsOwn(stores.count) { stores[$0].load(deep: deep) }
            return LoadedSides(local: sides[0], remotes: Array(sides.dropFirst()), stores: stores)
        }
    }
}

import Foundation
import Synchronization

extension Pipeline {
    /// Reads every side on its own, all at once: one failing does not
    /// discard the others.
    public var load: Stage<PipelineDefinition, LoadedSides> {
        Stage("load") { definition, context in
            let deep = definition.check == .deep
            let specs = [definition.local] + definition.remotes
            for spec in specs { context.note("reading \(spec.label)") }
            let read = Mutex([Int: SideListing]())
            Workers.perform(iterations: specs.count) { position in
                let side = specs[position].store(limits: definition.limits).load(deep: deep)
                read.withLock { $0[position] = side }
            }
            let sides = read.withLock { all in specs.indices.map { all[$0]! } }
            return LoadedSides(definition: definition, local: sides[0], remotes: Array(sides.dropFirst()))
        }
    }
}

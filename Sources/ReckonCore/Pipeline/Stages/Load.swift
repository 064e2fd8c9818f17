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
            // Held until the run lets the sides go: apply never writes a side mid-read.
            let locks = SideLocks(specs, process: run.settings.process)
            let stores = specs.map { $0.store(limits: definition.limits, process: run.settings.process) }
            // As iterations of one apply, each side's own work on every core gets a share of the cores
            // while the others are read (libdispatch divides them), leaving the rest to rclone's
            // listing; a remote's cache, read once the listing is done, takes every core (`RcloneStore`).
            let sides = mapOnEveryCore(stores, chunkSize: 1, on: run.settings.process.threads) { side in
                side.map { locks.refused($0.spec) ?? $0.load(deep: deep) }
            }.flatMap { $0 }
            for timing in sides.flatMap(\.stepTimings) { context.recordTiming(stage: timing.stage, duration: timing.duration) }
            var loaded = LoadedSides(local: sides[0], remotes: Array(sides.dropFirst()), stores: stores)
            loaded.locks = locks
            return loaded
        }
    }
}

import Foundation

/// The locks one run of a definition holds, and what a failure to take one
/// means. A definition refused for another pipeline's runs in its export
/// folder takes no lock first, so a good pipeline starting with it is never
/// kept out; then the export folder's lock (it lies outside the folder),
/// the check again under it, and the definition's own lock. A folder that
/// cannot hold that lock cannot hold reports either: the run goes on
/// without it, its outputs say what failed, and it is trouble.
package struct RunLocks {
    /// Why a run could not start; nothing was run.
    package enum Refusal: Error {
        /// The definition is not valid as it stands (its export folder holds another pipeline's runs): a usage error.
        case definition(DefinitionError)
        /// A lock is held by another run, or the export folder's could not be taken: trouble.
        case trouble(any Error)
    }

    private var exportLock: RunLock?
    private var lock: RunLock?
    /// The runs found in the export folder, checked under its lock.
    package private(set) var exportRuns: [RunFolder]
    /// The definition's lock that could not be written, when the run goes on without it.
    package private(set) var failure: OutputError?
    /// What to warn of, in order: running without the lock, a lock taken over from a process that no longer holds it.
    package private(set) var warnings: [String] = []

    /// Takes the locks of `definition`, read from `file` (as given), for a
    /// run that `writesFiles` (one that does not takes none, but still has
    /// its export folder checked); `exportLocked` is called once the export
    /// folder's lock is held; `process` says where the lock folder falls back to.
    package init(
        for definition: PipelineDefinition, file: String, writesFiles: Bool, process: ProcessSettings = ProcessSettings(),
        exportLocked: () -> Void = {}
    ) throws(Refusal) {
        do {
            _ = try definition.checkExportFolderIsOwn(file: file)
        } catch {
            throw .definition(error)
        }
        if writesFiles, let export = definition.export {
            do {
                exportLock = try TargetLock.lock(exportFolder: export.dir, shown: export.path, process: process)
            } catch let error as DefinitionError {
                throw .definition(error)
            } catch {
                throw .trouble(error)
            }
            exportLocked()
        }
        do {
            exportRuns = try definition.checkExportFolderIsOwn(file: file)
        } catch {
            exportLock?.release()
            throw .definition(error)
        }
        guard writesFiles, let url = definition.lockURL else { return }
        do {
            lock = try RunLock(at: url)
        } catch let busy as RunLock.Busy {
            exportLock?.release()
            throw .trouble(busy)
        } catch {
            warnings.append("running without a lock: \(errorWords(error))")
            failure = error as? OutputError ?? OutputError(path: url.path, reason: errorWords(error))
        }
        // The process may have died, or its id been reused by another
        // program: either way it no longer holds the lock.
        if let holder = lock?.staleHolder {
            warnings.append("took over the lock \(url.path) left by process \(holder), which no longer holds it")
        }
    }

    /// Lets the locks go: the definition's, then the export folder's.
    package func release() {
        lock?.release()
        exportLock?.release()
    }
}

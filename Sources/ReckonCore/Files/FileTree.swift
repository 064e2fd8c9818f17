import Foundation

/// A folder and everything in it, as one thing to remove.
package enum FileTree {
    /// Removes a folder and everything in it, never following a link; says
    /// which file could not be removed and why. `step` names the test stop
    /// taken after the first file is removed. The entry named `last` goes
    /// last: a run folder keeps its manifest until nothing else is left, so
    /// one whose removal was cut short is still known as reckon's, and the
    /// next run's retention finishes it.
    package static func remove(_ path: String, step: String? = nil, last: String? = nil, checkpoints: Checkpoints = Checkpoints()) throws(OutputError)
    {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path))?.sorted() ?? []
            for name in names.filter({ $0 != last }) + names.filter({ $0 == last }) {
                try remove(path + "/" + name, step: step, checkpoints: checkpoints)
            }
            guard rmdir(path) == 0 else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
        } else {
            guard unlink(path) == 0 else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
            if let step { checkpoints.at(step) }
        }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `reckon export`: one side exported whole into a folder of its own,
/// listed and exported in one go (nothing held per memo), replacing only
/// what reckon's own earlier export wrote there. Like a pipeline's export,
/// it is written into a staging folder beside its place and published by a
/// rename, so a killed run leaves the old export or the new one.
package struct FolderExport {
    package var store: any MemoStore
    package var formats: [ExportFormat]
    package var includeArchived: Bool
    /// The folder by its real path, as the user spelled it, and that
    /// spelling taken from the current folder without following links.
    package var out: URL
    package var outPath: String
    package var given: URL

    package init(store: any MemoStore, formats: [ExportFormat], includeArchived: Bool, out: URL, outPath: String, given: URL) {
        self.given = given
        self.store = store
        self.formats = formats
        self.includeArchived = includeArchived
        self.out = out
        self.outPath = outPath
    }

    /// Why nothing was exported, in words that name the file.
    package struct Refusal: Error, CustomStringConvertible {
        package var description: String
    }

    /// What was exported: the side's listing (its problems), and the
    /// summary unless the side could not be read (then nothing is left behind).
    package struct Outcome {
        package var listing: SideListing
        package var summary: ExportSummary?
    }

    /// Exports, or throws why nothing was written or published.
    package func run(progress: @escaping (Int, Int) -> Void) throws(Refusal) -> Outcome {
        // A link to a folder is the user's choice: `out` is the real path,
        // so the export replaces the folder it leads to.
        if FileKind(path: out.path) == .missing, FileKind(path: given.path) == .link {
            throw Refusal(description: "\(outPath): is a link that leads nowhere")
        }
        /// What stands in the way, named; nothing was written or published.
        func refusal(_ found: ExportFolder.InTheWay, _ what: String) -> Refusal {
            Refusal(
                description:
                    "\(joinPath(outPath, found.path)): \(found.reason). reckon replaces only what its own earlier export wrote, so nothing was \(what)."
            )
        }
        if let found = ExportFolder.inTheWay(of: out) { throw refusal(found, "written") }
        TestStop.at("checked")
        // The folders the export creates, removed again when it fails.
        var created: [URL] = []
        var above = out.deletingLastPathComponent()
        while FileKind(path: above.path) == .missing {
            created.append(above)
            above = above.deletingLastPathComponent()
        }
        var staging: URL?
        func cleanUp() {
            if let staging { try? ExportFolder.removeTree(staging.path) }
            for folder in created { rmdir(folder.path) }
        }
        do {
            let folder = try ExportFolder.makeStaging(beside: out)
            staging = folder
            let (listing, exported) = try Exporter(store: store).export(
                formats: formats, includeArchived: includeArchived, into: folder,
                progress: progress)
            guard let summary = exported else {
                // The side could not be read: leave no trace, not even the folder.
                cleanUp()
                return Outcome(listing: listing, summary: nil)
            }
            // A quick second look: nothing may have come into the folder meanwhile.
            if let found = ExportFolder.inTheWay(of: out, checkingBytes: false) {
                cleanUp()
                throw refusal(found, "published")
            }
            try ExportFolder.publish(folder, as: out)
            TestStop.at("done")
            return Outcome(listing: listing, summary: summary)
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            cleanUp()
            throw Refusal(description: exportFailure(error, dir: out, as: outPath))
        }
    }
}

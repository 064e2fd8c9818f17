import Foundation

/// A side's path joined with a path inside it, for messages (`inside` alone
/// when there is no root).
package func joinPath(_ root: String, _ inside: String) -> String {
    if inside.isEmpty { return root }
    // A kind of side may spell paths inside its sides its own way.
    for kind in SideKinds.all {
        if let joined = kind.join(root, inside) { return joined }
    }
    if root.isEmpty { return inside }
    return root.hasSuffix("/") ? root + inside : root + "/" + inside
}

extension Problem {
    /// Whether the problem is with the side's `index.json`, nested or not.
    package var isAboutIndex: Bool {
        path == "index.json" || path == MemoFolder.nestedFolder + "/index.json"
    }

    /// The same problem with its path taken from one folder further out.
    func inside(_ folder: String) -> Problem {
        guard !folder.isEmpty else { return self }
        var moved = self
        moved.path = joinPath(folder, path)
        return moved
    }
}

extension SideListing {
    /// Every id this side holds in any form: its index's entries, its memo
    /// files, and the ids of memos it cannot compare. Sorted, each once.
    package var knownIDs: [MemoID] { MemoID.union([entries.keys, files.keys, brokenIDs.keys.sorted()]) }
}

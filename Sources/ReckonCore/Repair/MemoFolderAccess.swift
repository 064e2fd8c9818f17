import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads files of a memo folder — on disk, or in an rclone remote — by
/// their paths inside it, each with the change tag a plan records. Never
/// follows a link, never writes.
package struct MemoFolderReader: Sendable {
    let access: any FileAccess

    /// Throws for a store side, which is never read or written as files,
    /// and for a remote that cannot be listed. `process`: what the process
    /// decides for the access (child environment, test checkpoints).
    package init(_ side: SideSpec, limits: ReadLimits = ReadLimits(), process: ProcessSettings = ProcessSettings()) throws(MemoFolderError) {
        access = try side.kind.fileAccess(shown: side.shownPath, limits: limits, process: process)
    }

    /// The validated file a path names, or a failure naming it.
    func file(_ path: String) throws(MemoFolderError) -> MemoFolderFile {
        guard let file = MemoFolderFile(path) else {
            // The path as given is shown with its control characters made visible.
            throw access.failure(
                escapedForDisplay(path), "is neither index.json nor memos/<uuid>.json; reckon reads and writes no other file in a memo folder")
        }
        return file
    }

    /// Each path's bytes and tag; nil when the file is absent. A link, a
    /// folder or a FIFO where the file should be throws a sentence naming
    /// the path. Over rclone, the files are listed and fetched in one call
    /// each, whatever their number.
    package func read(_ paths: [String]) throws(MemoFolderError) -> [String: FileRead?] {
        var files: [MemoFolderFile] = []
        for path in paths { files.append(try file(path)) }
        return try access.read(files)
    }
}

/// Permission to write into a memo folder. Only `apply` and `undo` make
/// one: its initializer (the synthesized one) is internal to ReckonCore.
package struct WriteGrant: Sendable {}

/// Writes files into a memo folder, on disk or in an rclone remote. Only
/// `apply` and `undo` build one (it takes a `WriteGrant`).
package struct MemoFolderWriter: Sendable {
    /// Reads the same folder, to check a file right before it is written.
    package let reader: MemoFolderReader
    private let grant: WriteGrant

    /// Throws for a store side, and for a remote that cannot be listed.
    package init(_ side: SideSpec, grant: WriteGrant, process: ProcessSettings = ProcessSettings()) throws(MemoFolderError) {
        reader = try MemoFolderReader(side, process: process)
        self.grant = grant
    }

    /// Creates or replaces one file atomically, only if it still holds
    /// what the caller read: `expecting` is its SHA-256, or nil for a file
    /// that must be absent. On disk the check is made at the swap itself:
    /// the new file is written under a temporary name in the same folder,
    /// flushed, then swapped with the target (`renameat2` with
    /// RENAME_EXCHANGE, or RENAME_NOREPLACE for a new file); if what was
    /// swapped out is not what the caller read (the app saved meanwhile),
    /// it is swapped straight back and `changedSince` is thrown. The new
    /// file keeps the old one's owner and permissions. Never through a link
    /// (`memos/` is made when missing). Over rclone: the target is read
    /// again, then `copyto` a temporary name in the same remote folder and
    /// `moveto` onto the target (rclone deletes the target first: a moment
    /// without the file, and no compare-and-swap: the race is narrowed, not closed).
    package func write(_ data: Data, to path: String, expecting: String?) throws(MemoFolderError) {
        try reader.access.write(data, to: try reader.file(path), expecting: expecting, grant: grant)
    }

    /// Removes one file (undo uses it only for a file apply created and
    /// that still has apply's bytes). An absent file is left absent.
    package func remove(_ path: String) throws(MemoFolderError) {
        try reader.access.remove(try reader.file(path), grant: grant)
    }

    /// Every temporary file a writer makes starts so; a run that holds the
    /// side's lock removes those a killed run left (`removeLeftovers`).
    static let temporaryPrefix = ".reckon-write."

    /// Removes the temporary files a killed run left in the folder and its
    /// `memos/`, and says which. Called only while the side's lock is held.
    /// A file goes only when its name is one a writer makes, of a process
    /// that is gone (on disk), and its bytes are ones reckon wrote or read
    /// (`known`: SHA-256s from the plan and the journals) or it is empty,
    /// so nothing a person made under such a name is ever removed.
    package func removeLeftovers(known: Set<String>) -> [String] {
        reader.access.removeLeftovers(known: known, grant: grant)
    }
}

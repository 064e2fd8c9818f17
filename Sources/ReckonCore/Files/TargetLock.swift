import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The lock apply and undo hold on a memo folder they write, and a run or
/// `reckon export` on the export folder it writes: one per target, not per
/// pipeline, so two pipelines naming one folder never write it at once. The locks lie in one folder shared by every pipeline —
/// `/run/lock/reckon/` when it can be used, else `$TMPDIR/reckon-locks/` —
/// each named by the first 16 hex digits of the SHA-256 of the target's
/// real path (the folder holding `index.json`), for a remote of how
/// `SideIdentity` names it (a hash, so no secret shows), and for an export
/// folder of `export ` and its real path.
package enum TargetLock {
    /// Why no lock folder can be used, or why a side is never a target.
    package struct Refusal: Error, CustomStringConvertible {
        package var description: String
    }

    /// Takes the target's lock, or throws `RunLock.Busy` naming the process
    /// that holds it. `folder` is the lock folder (tests give their own).
    /// Commands reading the side are waited for, up to `readWait`.
    package static func lock(_ side: SideSpec, in folder: URL? = nil, process: ProcessSettings = ProcessSettings()) throws -> RunLock {
        try lock(name: lockName(side), in: folder, process: process, readers: process.lockWait)
    }

    /// The sides in the order their locks are taken, by the locks' names:
    /// readers and writers alike, so none waits on another in a circle.
    package static func inOrder(_ sides: [SideSpec]) -> [SideSpec] {
        sides.map { ((try? lockName($0)) ?? "", $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The side's lock, taken shared, as every command that reads a side
    /// apply may write takes it; nil for a side that is never a target
    /// (the app's store). Throws `RunLock.Written` after `wait`, and the
    /// error of a lock folder that cannot be used, as apply does: without
    /// the lock, nothing keeps apply out of the read.
    package static func share(_ side: SideSpec, process: ProcessSettings) throws -> RunLock? {
        guard let name = try? lockName(side) else { return nil }
        return try RunLock(sharing: lockFolder(process: process).appendingPathComponent(name + ".lock"), waiting: process.lockWait)
    }

    /// Takes the lock of an export folder (a pipeline's `export.dir`, or
    /// the folder `reckon export` replaces), or throws `RunLock.Busy`: one
    /// lock per folder by its real path, whichever definition or command
    /// names it, so two runs never write one export folder at once. It
    /// lies with the targets' locks, not in the folder, which `reckon
    /// export` replaces whole and which may be another pipeline's. A lock
    /// folder that cannot be used is an error, as for apply: without the
    /// lock nothing keeps another run out. `shown` is the folder as the
    /// user spelled it, for the messages.
    package static func lock(exportFolder dir: URL, shown: String, in folder: URL? = nil, process: ProcessSettings = ProcessSettings()) throws
        -> RunLock
    {
        do {
            return try lock(name: lockName(place: "export " + realPath(dir.path)), in: folder, process: process)
        } catch var busy as RunLock.Busy {
            busy.guarding = "the export folder \(shown)"
            throw busy
        } catch let error as OutputError {
            throw OutputError(path: error.path, reason: "\(error.reason); it is the lock of the export folder \(shown), so nothing was written")
        }
    }

    /// The lock `name` in `folder` (else the lock folder), taken alone,
    /// waiting up to `readers` for the commands reading under it.
    private static func lock(name: String, in folder: URL?, process: ProcessSettings, readers: Duration = .zero) throws -> RunLock {
        let folder = try folder ?? lockFolder(process: process)
        try checkPrivate(folder)
        return try RunLock(at: folder.appendingPathComponent(name + ".lock"), readers: readers)
    }

    /// The lock file's name for a side: 16 hex digits.
    package static func lockName(_ side: SideSpec) throws(Refusal) -> String {
        lockName(place: try side.kind.lockPlace(shown: side.shownPath))
    }

    /// The lock file's name for a place: the first 16 hex digits of its SHA-256.
    private static func lockName(place: String) -> String {
        String(SHA256.hex(of: Data(place.utf8)).prefix(16))
    }

    /// `/run/lock/reckon` when it is, or can be made, a folder of this
    /// user's that no one else can write; else `$TMPDIR/reckon-locks`, made
    /// so when missing (the temporary root of `process`).
    package static func lockFolder(process: ProcessSettings) throws -> URL {
        let shared = URL(fileURLWithPath: "/run/lock/reckon")
        if access("/run/lock", W_OK) == 0 || FileKind(path: shared.path) == .directory {
            // A folder this user may not make, or not use, sends the lock to
            // TMPDIR; a disk's failure is said.
            let madeShared = mkdir(shared.path, 0o700) == 0 || errno == EEXIST
            if !madeShared, ![EACCES, EPERM, EROFS].contains(errno) { throw OutputError(path: shared.path, reason: AtomicFile.lastError()) }
            if madeShared, (try? checkPrivate(shared)) != nil { return shared }
        }
        do {
            return try made(URL(fileURLWithPath: process.temporaryRoot).appendingPathComponent("reckon-locks"))
        } catch let error as OutputError {
            throw OutputError(path: error.path, reason: PrivateFolder.namingTMPDIR(error.reason, in: process))
        }
    }

    /// The folder, made with mode 0700 when missing, and checked.
    private static func made(_ folder: URL) throws -> URL {
        if mkdir(folder.path, 0o700) != 0 && errno != EEXIST {
            throw OutputError(path: folder.path, reason: AtomicFile.lastError())
        }
        try checkPrivate(folder)
        return folder
    }

    /// Refuses a lock folder that is a link, not a folder, someone else's, or writable by others.
    private static func checkPrivate(_ folder: URL) throws {
        var info = stat()
        guard lstat(folder.path, &info) == 0 else { throw OutputError(path: folder.path, reason: AtomicFile.lastError()) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw OutputError(path: folder.path, reason: "a link stands where the lock folder must be; reckon does not follow it")
        default: throw OutputError(path: folder.path, reason: "\(FileKind(path: folder.path).description) stands where the lock folder must be")
        }
        guard info.st_uid == getuid(), info.st_mode & 0o022 == 0 else {
            throw OutputError(
                path: folder.path,
                reason: "the lock folder belongs to another user or others can write in it; reckon keeps its locks only in a folder of its own")
        }
    }
}

/// The locks of the sides one command reads, taken shared for as long as
/// it reads them, so apply and undo never write a side mid-read: taken in
/// the order of their names (apply takes its own so too, so neither waits
/// on the other in a circle), let go when the value is. A side whose
/// writer held on for all of `ProcessSettings.lockWait` fails, in words.
package final class SideLocks: Sendable {
    private let held: Mutex<[RunLock]>
    /// Why each side that could not be locked fails, by the side's name.
    package let refusals: [String: String]

    /// Shares the locks of `sides`, waiting as long as `process` says.
    package init(_ sides: [SideSpec], process: ProcessSettings = ProcessSettings()) {
        var locks: [RunLock] = []
        var refusals: [String: String] = [:]
        for side in TargetLock.inOrder(sides) {
            do {
                if let lock = try TargetLock.share(side, process: process) { locks.append(lock) }
            } catch let written as RunLock.Written {
                refusals[side.name] = written.description
            } catch {
                refusals[side.name] = "cannot take its lock, which keeps reckon apply out while it is read: \(errorWords(error))"
            }
        }
        held = Mutex(locks)
        self.refusals = refusals
    }

    deinit { held.withLock { for lock in $0 { lock.release() } } }

    /// The side as a failed listing saying why, when its lock could not be had; nil when it is held.
    package func refused(_ side: SideSpec) -> SideListing? {
        refusals[side.name].map { SideListing(spec: side, status: .failed, problems: [Problem(.unreadableFolder, path: "", $0)]) }
    }
}

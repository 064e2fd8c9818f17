import Foundation

/// Why a plan's action is what it is: a case and what it names (the sides'
/// labels as given, ids, options), never a sentence. `RepairStrings` renders
/// it in each language, one function per language; the English rendering
/// is the action's `reason`, which `plan.json` always keeps. A plan made in
/// another language keeps this structure too (`why`), so that apply and undo
/// can say it in that language again.
package enum PlanReason: Sendable, Equatable, Codable {
    /// `!`: the memo's problems on each side (their own messages, which stay
    /// in English as in every report); nothing is done.
    case cannotCompare(problems: [SideProblems])
    /// Changed on both sides since they last agreed (`agreed`), on neither, or never agreed: a person
    /// chooses with `--take ID=…` or `--prefer`; `note` says why a choice
    /// that was given could not settle it.
    case conflict(changed: Difference.Changed, local: String, remote: String, id: MemoID, note: ConflictNote?, agreed: Timestamp? = nil)
    /// A valid memo file (`path`, `memos/<id>.json`) on `side` with no entry in
    /// index.json: its entry is added.
    case orphanFile(path: String, side: String)
    /// The same, but the file cannot be read as a memo: nothing is done.
    case orphanUnreadable(path: String, side: String)
    /// The entry in index.json on `side` disagrees with its memo file
    /// (`path`): the entry is set from the file's own fields.
    case indexDisagrees(path: String, side: String)
    /// Only `side` changed the memo (`move`) since the sides last agreed
    /// on it (`agreed`; nil: they never did, and only `side` holds it), and
    /// `other` follows it: a copy, or a soft deletion when the move was a deletion.
    case followed(move: Move, side: String, other: String, agreed: Timestamp? = nil)
    /// Only `side` changed it since they last agreed, but a person took
    /// `other`'s version: what moved is replaced, by a copy or (`deletes`) a
    /// soft deletion on `side`.
    case replaced(move: Move, side: String, other: String, deletes: Bool, agreed: Timestamp? = nil)
    /// A conflict settled by a choice: `from`'s version is copied to `to`,
    /// or (`deletes`) the memo is marked deleted there; with `keepsCopy`,
    /// `to`'s older version lives on as a conflict copy.
    case settled(
        changed: Difference.Changed, local: String, remote: String, from: String, to: String, deletes: Bool, keepsCopy: Bool,
        agreed: Timestamp? = nil)
    /// The action needs `side` written, which apply never writes (`why`);
    /// it would have done `would`.
    case notPossible(side: String, why: NotWritable, would: Would)
    /// The version to copy, on `side`, could not be read: nothing is done.
    case sourceUnreadable(side: String)
    /// The memo file to mark deleted, on `side`, could not be read: nothing is done.
    case targetUnreadable(side: String)

    /// What moved on the one side that changed the memo since the sides last agreed.
    package enum Move: String, Sendable, Codable {
        case added, edited, archived, kept, deleted
    }

    /// What a not-possible action would have done on its side.
    package enum Would: Sendable, Equatable, Codable {
        case addEntry
        /// Copy `from`'s version there.
        case copy(from: String)
        case markDeleted
    }

    /// One side's problems with a memo that cannot be compared.
    package struct SideProblems: Sendable, Equatable, Codable {
        package var side: String
        package var problems: [String]

        package init(side: String, problems: [String]) {
            self.side = side
            self.problems = problems
        }
    }
}

/// Why a choice a person gave leaves a conflict open.
package enum ConflictNote: Sendable, Equatable, Codable {
    /// `--take ID=both`, and the two versions have the same time.
    case takeBothSameTime(id: MemoID)
    /// `--prefer newer`, and the two versions have the same time.
    case preferNewerSameTime
    /// `--prefer local|remote` (`side`), which never deletes a memo the
    /// preferred side (`label`) never had.
    case preferWouldDelete(side: SideRole, label: String, id: MemoID)
}

/// The choice that settled a conflict, said in so many words.
package enum PlanChoice: Sendable, Equatable, Codable {
    /// `--take ID=local|remote`: `label`'s version is kept.
    case take(id: MemoID, side: SideRole, label: String)
    /// `--take ID=both`: `newer`'s version keeps the id, the older one lives on as a conflict copy.
    case takeBoth(id: MemoID, newer: String)
    /// `--take ID=both`, but `holder` has no live version to keep, so `taken`'s is taken.
    case takeBothNoCopy(id: MemoID, holder: String, taken: String)
    /// `--prefer local|remote`: `label`'s version is kept.
    case prefer(side: SideRole, label: String)
    /// `--prefer newer`: `label`'s version is the newer.
    case preferNewer(label: String)
}

/// Why apply may never write a side.
package enum NotWritable: Sendable, Equatable, Codable {
    /// Marked `"readOnly": true` in its definition.
    case readOnly
    /// Of a kind apply never writes (the app's store), whose words say why.
    case kind(SideKindName)
    /// Another reason, in English words as a plan recorded them.
    case other(String)
}

extension PlanSide {
    /// Why apply may not write here, as a case (`notWritable` is its English
    /// sentence, which the planner made from it); nil when it may.
    package var whyNotWritable: NotWritable? {
        guard !writable, let notWritable else { return nil }
        return [NotWritable.readOnly, .kind(kind)].first { RepairStrings.en.notWritable($0, label) == notWritable } ?? .other(notWritable)
    }
}

/// What became of one action in an apply run beyond its outcome, as a case
/// and what it names; rendered in each language by `RepairStrings`, and
/// kept in `report.json` as its English sentence (`detail`).
package enum ApplyDetail: Sendable, Equatable {
    /// Deletes or overwrites, and was not confirmed.
    case notConfirmed
    /// The file to write changed since the plan: left as it is.
    case fileChanged(path: String, side: String, then: FileTag?, now: FileTag?)
    /// The version to copy changed since the plan.
    case sourceChanged(path: String, side: String)
    /// The index entry of the version to copy changed since the plan.
    case sourceEntryChanged(id: String, side: String)
    /// The side now holds the memo under another spelling of its id (`path`).
    case otherSpelling(path: String, side: String)
    /// The memo file an added entry describes changed since the plan.
    case describedFileChanged(path: String, side: String, then: FileTag?, now: FileTag?)
    /// An index entry to change changed since the plan.
    case entryChanged(id: String, side: String)
    /// A target could not be read again before writing.
    case unreadable(error: String)
    case backupFailed(path: String, side: String, error: String)
    /// The journal cannot be written; what was written is put back, or `failures` say what could not be.
    case journalFailed(failures: [PutBackFailure])
    /// Another writer changed the file while it was written.
    case changedWhileWriting(path: String, side: String, undone: Undone)
    case writeFailed(path: String, side: String, error: String, undone: Undone)
    /// The memo's index entry changed while its file was written: the file is put back.
    case entryChangedWhileWriting(id: String, side: String, failures: [PutBackFailure])
    /// The side's index.json could not take the entries: the memo files are put back.
    case indexFailed(IndexTrouble, side: String, failures: [PutBackFailure])

    /// What became of the files an action had written when it stopped.
    package enum Undone: Sendable, Equatable {
        /// It had written none.
        case nothing
        /// All were put back.
        case putBack
        /// Some could not be put back.
        case failures([PutBackFailure])
    }

    /// Why a side's index.json could not take the done actions' entries.
    package enum IndexTrouble: Sendable, Equatable {
        case keptChanging
        case unreadableAgain(error: String)
        case gone
        case unreadableNow(error: String)
        case notEditable(error: String)
        case backupFailed(error: String)
        case journal
        case writeFailed(error: String)
    }
}

/// A file that could not be put back, and where its backup is.
package struct PutBackFailure: Sendable, Equatable {
    package var path: String
    package var error: String
    package var backup: String
}

/// A sentence about an apply or undo run as a whole, as a case; kept in
/// `report.json` as its English sentence (`notes`).
package enum RunNote: Sendable, Equatable {
    /// A temporary file a killed run left on a side, removed.
    case removedTemporary(name: String, side: String)
    /// The same in the state folder.
    case removedStateTemporary(path: String)
    /// Undo: a file on `side` changed after the apply, so nothing of that side was put back.
    case sideLeftWhole(path: String, side: String)
    case unreadable(FilePlace, error: String)
    case changedAfterApply(FilePlace, backup: String?)
    case backupNotTheFile(backup: String, FilePlace)
    case notPutBack(FilePlace, error: String, backup: String?)
    /// The journal could not be written: the run is trouble, and what it
    /// did is in the journal up to its last line.
    case journalNotWritten(path: String, error: String)
    /// A file of the state folder (a baseline) could not be written: the
    /// sides are as the apply left them, and the next deep run saves it again.
    case stateNotWritten(path: String, error: String)
}

/// A file on a side (its label), or in the state folder (`side` nil).
package struct FilePlace: Sendable, Equatable {
    package var path: String
    package var side: String?
}

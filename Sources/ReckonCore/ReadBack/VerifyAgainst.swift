/// What `reckon verify` found: the export's check and, when a side was
/// named, that side's listing and how it moved on since the export.
package struct VerifyOutcome {
    package var result: ExportVerification
    /// The side named to compare with, as it was read (its problems and status).
    package var side: SideListing?
    /// The side's path and its changes since the export; nil when no side
    /// was named, the export could not be read whole, or the side failed.
    package var against: (side: String, changes: [ExportChange])?

    /// 2 when the export is damaged or the side is in trouble, 1 when the
    /// side moved on, else 0.
    package var exitCode: Int32 {
        if result.damaged || side?.hasTrouble == true { return 2 }
        return against.map { $0.changes.isEmpty } == false ? 1 : 0
    }
}

extension ExportVerifier {
    /// Checks `export` against its manifest and, given `side`, compares
    /// every memo that side would export now with what the export holds.
    /// `process`: what the process decides for the reading (workers).
    package static func verify(_ export: ExportOnDisk, against side: SideSpec?, process: ProcessSettings = ProcessSettings()) -> VerifyOutcome {
        let result = ExportVerifier(export, keepMemos: side != nil, on: process.threads).verify()
        guard let side, let memos = result.memos, let manifest = result.manifest else { return VerifyOutcome(result: result) }
        let locks = SideLocks([side], process: process)
        let listing = locks.refused(side) ?? side.store(limits: ReadLimits(), process: process).load(deep: true)
        let against = listing.status == .failed ? nil : (side.path, changes(since: memos, manifest: manifest, side: listing))
        return VerifyOutcome(result: result, side: listing, against: against)
    }
}

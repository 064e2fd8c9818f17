/// rclone check's `--combined` listing: one `<sigil> <id>` line per memo seen
/// on either side, `=` included, sorted by id. When a side could not be read,
/// every memo of the other is `!`.
import Foundation

package enum CombinedListing {
    package static func render(local: SideListing, remote: SideListing, differences: [Difference]) -> Data {
        let listed = Dictionary(
            differences.filter { $0.remote == remote.spec.name }.map { ($0.id, $0.sigil) },
            uniquingKeysWith: { a, _ in a })
        let ids = MemoID.union([listed.keys.sorted(), local.entries.keys, local.files.keys, remote.entries.keys, remote.files.keys])
        let unreadable = local.status == .failed || remote.status == .failed
        // 39 bytes a line, written straight into one buffer: 100,000 lines make no string each.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(ids.count * 39)
        for id in ids {
            bytes.append((unreadable ? .cannotCompare : listed[id] ?? .same).rawValue.utf8.first!)
            bytes.append(0x20)
            id.append(to: &bytes)
            bytes.append(0x0A)
        }
        return Data(bytes)
    }
}

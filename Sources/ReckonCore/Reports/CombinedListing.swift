/// rclone check's `--combined` listing: one `<sigil> <id>` line per memo seen
/// on either side, `=` included, sorted by id. When a side could not be read,
/// every memo of the other is `!`.
public enum CombinedListing {
    public static func render(local: SideListing, remote: SideListing, differences: [Difference]) -> String {
        let listed = Dictionary(differences.filter { $0.remote == remote.spec.name }.map { ($0.id, $0.sigil) },
                                uniquingKeysWith: { a, _ in a })
        let ids = MemoID.union([listed.keys.sorted(), local.entries.keys, local.files.keys, remote.entries.keys, remote.files.keys])
        let unreadable = local.status == .failed || remote.status == .failed
        return ids.map { "\((unreadable ? .cannotCompare : listed[$0] ?? .same).rawValue) \($0)\n" }.joined()
    }
}

/// rclone check's `--combined` listing: one `<sigil> <id>` line per memo seen
/// on either side, `=` included, sorted by id. When a side could not be read,
/// every memo of the other is `!`.
public enum CombinedListing {
    public static func render(local: SideListing, remote: SideListing, differences: [Difference]) -> String {
        let listed = Dictionary(differences.filter { $0.remote == remote.spec.name }.map { ($0.id, $0.sigil) },
                                uniquingKeysWith: { a, _ in a })
        var ids = Set(listed.keys)
        for side in [local, remote] {
            ids.formUnion(side.entries.keys)
            ids.formUnion(side.files.keys)
        }
        let unreadable = local.status == .failed || remote.status == .failed
        return ids.sorted().map { "\((unreadable ? .cannotCompare : listed[$0] ?? .same).rawValue) \($0)\n" }.joined()
    }
}

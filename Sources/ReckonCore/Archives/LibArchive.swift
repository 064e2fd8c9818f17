import CArchive

/// libarchive, through the `CArchive` system library target; zip archives
/// are written with it.
public enum LibArchive {
    /// The linked library's own version string ("libarchive 3.6.2 …").
    public static var version: String { String(cString: archive_version_details()) }
}

import Foundation

extension Problem {
    /// `error: <root>/<path>: <message>`, the one way a problem is printed;
    /// a report's language may name its kind too (`Strings.reason`). Control
    /// and format characters from a name or a file are shown escaped.
    package func line(under root: String, in strings: Strings = .en) -> String {
        escapedForDisplay("\(strings.severity(severity)): \(joinPath(root, path)): \(strings.reason(self))")
    }
}

import Foundation

/// Which part a side plays: the local side is rclone's source, a remote its destination.
package enum SideRole: String, Sendable, Codable, CaseIterable {
    case local
    case remote

    /// The side across from this one.
    package var other: SideRole { self == .local ? .remote : .local }
}

/// One key a kind of side reads from its side's object in a pipeline
/// definition, as rclone's backends register their options: its name, what
/// it holds, and whether it may hold a secret (a connection string's password).
package struct DefinitionKey: Sendable, Hashable {
    /// What a key's value is.
    package enum Holds: Sendable, Hashable {
        case text
        /// A path, taken from the definition's folder.
        case path
        case number
        case strings
        /// An object with these keys.
        case object(Set<String>)
    }

    package var name: String
    package var holds: Holds
    /// Whether the value may hold a secret: it is shown masked, and a plan keeps it only when it holds none.
    package var isSecret = false
    /// The name a plan keeps the value under to reach the side again; nil when a plan keeps none.
    package var planKey: String?

    package init(_ name: String, holds: Holds, isSecret: Bool = false, planKey: String? = nil) {
        self.name = name
        self.holds = holds
        self.isSecret = isSecret
        self.planKey = planKey
    }

    /// The keys of the object it holds; nil when it holds no object.
    package var objectKeys: Set<String>? {
        if case .object(let keys) = holds { return keys }
        return nil
    }
}

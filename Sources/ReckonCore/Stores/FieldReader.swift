/// Reads typed fields out of a JSON object, with messages that name the key
/// and what was found instead.
struct FieldReader {
    struct Failure: Error {
        var message: String
    }

    let object: [String: JSONValue]

    /// A string, or nil when the key is absent or null.
    func string(_ key: String) throws(Failure) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw Failure(message: "'\(key)' must be a string, found \(other.typeName)")
        }
    }

    func requiredString(_ key: String) throws(Failure) -> String {
        guard let value = try string(key) else { throw Failure(message: "'\(key)' is missing") }
        return value
    }

    /// An ISO 8601 instant, or nil when the key is absent or null.
    func timestamp(_ key: String) throws(Failure) -> Timestamp? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?:
            guard let value = Timestamp(iso8601: text) else {
                throw Failure(message: "'\(key)' is not an ISO 8601 date with a time zone: \"\(text)\"")
            }
            return value
        case let other?: throw Failure(message: "'\(key)' must be an ISO 8601 date or null, found \(other.typeName)")
        }
    }

    func requiredTimestamp(_ key: String) throws(Failure) -> Timestamp {
        guard let value = try timestamp(key) else { throw Failure(message: "'\(key)' is missing") }
        return value
    }

    func bool(_ key: String) throws(Failure) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw Failure(message: "'\(key)' must be true or false, found \(other.typeName)")
        }
    }

    func strings(_ key: String) throws(Failure) -> [String]? {
        switch object[key] {
        case nil, .null?: return nil
        case .array(let items)?:
            var result: [String] = []
            for item in items {
                guard case .string(let value) = item else {
                    throw Failure(message: "'\(key)' must hold strings only, found \(item.typeName)")
                }
                result.append(value)
            }
            return result
        case let other?: throw Failure(message: "'\(key)' must be an array of strings, found \(other.typeName)")
        }
    }
}

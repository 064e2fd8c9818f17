/// Why one field could not be used: names the key and what was found instead.
struct FieldError: Error {
    var message: String
}

/// Typed reading of one JSON object's fields straight from the decoder, with
/// messages that name the key and what was found instead. Absent and null
/// are the same; a wrong type is an error for that field only.
extension KeyedDecodingContainer where Key == AnyKey {
    func isAbsentOrNull(_ key: AnyKey) -> Bool {
        !contains(key) || (try? decodeNil(forKey: key)) == true
    }

    /// What JSON type stands at a key, for a message; only on the error path.
    func typeName(_ key: AnyKey) -> String {
        (try? decode(JSONValue.self, forKey: key))?.typeName ?? "text that is not valid JSON (not UTF-8, or a raw control character)"
    }

    func string(_ name: String) throws(FieldError) -> String? {
        let key = AnyKey(name)
        guard !isAbsentOrNull(key) else { return nil }
        guard let text = try? decode(String.self, forKey: key) else {
            throw FieldError(message: "'\(name)' must be a string, found \(typeName(key))")
        }
        return text
    }

    func requiredString(_ name: String) throws(FieldError) -> String {
        guard let text = try string(name) else { throw FieldError(message: "'\(name)' is missing") }
        return text
    }

    /// An ISO 8601 instant with a time zone.
    func timestamp(_ name: String) throws(FieldError) -> Timestamp? {
        let key = AnyKey(name)
        guard !isAbsentOrNull(key) else { return nil }
        guard let text = try? decode(String.self, forKey: key) else {
            throw FieldError(message: "'\(name)' must be an ISO 8601 date or null, found \(typeName(key))")
        }
        guard let value = Timestamp(iso8601: text) else {
            throw FieldError(message: "'\(name)' is not an ISO 8601 date with a time zone: \"\(text)\"")
        }
        return value
    }

    func requiredTimestamp(_ name: String) throws(FieldError) -> Timestamp {
        guard let value = try timestamp(name) else { throw FieldError(message: "'\(name)' is missing") }
        return value
    }

    func bool(_ name: String) throws(FieldError) -> Bool? {
        let key = AnyKey(name)
        guard !isAbsentOrNull(key) else { return nil }
        guard let value = try? decode(Bool.self, forKey: key) else {
            throw FieldError(message: "'\(name)' must be true or false, found \(typeName(key))")
        }
        return value
    }

    func strings(_ name: String) throws(FieldError) -> [String]? {
        let key = AnyKey(name)
        guard !isAbsentOrNull(key) else { return nil }
        guard let values = try? decode([String].self, forKey: key) else {
            throw FieldError(message: "'\(name)' must be an array of strings, found \(typeName(key))")
        }
        return values
    }
}

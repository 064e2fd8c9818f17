/// Why one field could not be used: names the key and what was found instead.
struct FieldError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Typed reading of one parsed JSON object's fields, with messages that
/// name the key and what was found instead. Absent and null are the same;
/// a wrong type is an error for that field only.
struct FieldReader {
    var fields: [String: JSONValue]

    /// The value at `name`, nil when absent or null.
    func value(_ name: String) -> JSONValue? {
        guard let value = fields[name], value != .null else { return nil }
        return value
    }

    func string(_ name: String) throws(FieldError) -> String? {
        switch value(name) {
        case nil: return nil
        case .string(let text)?: return text
        case let other?: throw FieldError(message: "'\(name)' must be a string, found \(other.typeName)")
        }
    }

    func requiredString(_ name: String) throws(FieldError) -> String {
        guard let text = try string(name) else { throw FieldError(message: "'\(name)' is missing") }
        return text
    }

    /// An ISO 8601 instant with a time zone.
    func timestamp(_ name: String) throws(FieldError) -> Timestamp? {
        switch value(name) {
        case nil: return nil
        case .string(let text)?:
            switch Timestamp.parse(text) {
            case .success(let value): return value
            case .failure(let refusal): throw FieldError(message: refusal.message(field: name, text: text))
            }
        case let other?: throw FieldError(message: "'\(name)' must be an ISO 8601 date or null, found \(other.typeName)")
        }
    }

    func requiredTimestamp(_ name: String) throws(FieldError) -> Timestamp {
        guard let value = try timestamp(name) else { throw FieldError(message: "'\(name)' is missing") }
        return value
    }

    func bool(_ name: String) throws(FieldError) -> Bool? {
        switch value(name) {
        case nil: return nil
        case .bool(let flag)?: return flag
        case let other?: throw FieldError(message: "'\(name)' must be true or false, found \(other.typeName)")
        }
    }

    func strings(_ name: String) throws(FieldError) -> [String]? {
        switch value(name) {
        case nil: return nil
        case .array(let items)?:
            var texts: [String] = []
            for item in items {
                guard case .string(let text) = item else { throw FieldError(message: "'\(name)' must be an array of strings, found an array") }
                texts.append(text)
            }
            return texts
        case let other?: throw FieldError(message: "'\(name)' must be an array of strings, found \(other.typeName)")
        }
    }
}

extension Timestamp.Refusal {
    /// The sentence for the field `name` holding `text`.
    func message(field name: String, text: String) -> String {
        switch self {
        case .notADate: "'\(name)' is not an ISO 8601 date with a time zone: \"\(text)\""
        case .leapSecond:
            "'\(name)' names second 60, a leap second, which reckon cannot keep (its times, like POSIX clocks, have no second 60): \"\(text)\""
        case .year(let year):
            "'\(name)' falls in year \(year) in UTC; reckon keeps dates from year 1 to 9999 only, the years it can write back: \"\(text)\""
        }
    }
}

extension JSONSyntaxError {
    /// The sentence a reader gives for a file this error makes damaged.
    var readerMessage: String {
        switch kind {
        case .syntax: "not valid JSON (\(reason))"
        case .encoding, .tooDeep: reason
        }
    }
}

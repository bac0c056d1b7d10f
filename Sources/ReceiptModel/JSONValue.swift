/// A JSON value kept exactly as it arrived, so that fields the model does not know survive a round trip.
///
/// Numbers keep their literal text (`1697679936049.7297` stays that), and objects keep member order.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal text as it appeared in the input.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The object, when this is one.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON object with its members in input order.
public struct JSONObject: Hashable, Sendable, Sequence {
    /// One `"key": value` pair.
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSONValue
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in input order; a duplicated key keeps its first occurrence for lookups.
    public var members: [Member]

    /// Creates an object from members in order.
    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// The value of the first member named `key`.
    public subscript(key: String) -> JSONValue? {
        let length = key.utf8.count
        // Comparing lengths first skips most of the full string comparisons.
        for member in members where member.key.utf8.count == length && member.key == key { return member.value }
        return nil
    }

    /// Whether a member named `key` exists.
    public func has(_ key: String) -> Bool {
        self[key] != nil
    }

    /// Appends a member.
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    public var isEmpty: Bool { members.isEmpty }

    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }
}

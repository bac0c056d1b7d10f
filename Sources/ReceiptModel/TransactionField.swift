/// One field of a transaction under Apple's `JWSTransactionDecodedPayload` name.
///
/// ``Transaction/fields`` is the one list of them, in Apple's order: the decoder reads a signed transaction by
/// it, the JSON writer writes by it, merging fills by it and the dashboard's transaction screen lists by it, so
/// a field Apple adds is added once, here.
public struct TransactionField: Sendable {
    /// How the value is held and shown.
    public enum Kind: Sendable {
        /// A string, or an Apple enumeration with string raw values.
        case text
        /// An integer, or an Apple enumeration with integer raw values.
        case integer
        /// Milliseconds since 1970.
        case date
        case flag
        /// An amount in milliunits of its currency (`price`).
        case milliunits
        /// JSON kept as it came (`advancedCommerceInfo`); written only when present.
        case json
    }

    /// How two sightings of a transaction combine this field (``Transaction/merge(_:preferOther:)``).
    public enum MergeRule: Sendable {
        /// The winning sighting's value, else the other's.
        case fill
        /// The transaction's identity: the same in both.
        case identity
        /// A revocation field: a later fact, merged together with the revocation date.
        case revocation
        /// `isUpgraded`: once true, true.
        case upgrade
    }

    public let name: String
    public let kind: Kind
    public let merge: MergeRule
    /// The value, `nil` when the transaction does not have it.
    public let value: @Sendable (Transaction) -> FieldValue?
    /// Sets the value (`nil` clears it); a value of another kind is ignored.
    public let assign: @Sendable (inout Transaction, FieldValue?) -> Void
}

/// A value of a ``TransactionField``.
public enum FieldValue: Hashable, Sendable {
    case text(String)
    case integer(Int64)
    case date(Timestamp)
    case flag(Bool)
    case json(JSONValue)
}

extension Transaction {
    /// Every field Apple's `JWSTransactionDecodedPayload` has, in Apple's order.
    public static let fields: [TransactionField] = [
        TransactionField(
            name: "transactionId", kind: .text, merge: .identity, value: { .text($0.transactionId) },
            assign: { t, value in if case .text(let id)? = value { t.transactionId = id } }),
        .text("originalTransactionId", \.originalTransactionId),
        .text("webOrderLineItemId", \.webOrderLineItemId),
        .text("bundleId", \.bundleId),
        .text("productId", \.productId),
        .text("subscriptionGroupIdentifier", \.subscriptionGroupIdentifier),
        .date("purchaseDate", \.purchaseDate),
        .date("originalPurchaseDate", \.originalPurchaseDate),
        .date("expiresDate", \.expiresDate),
        .int("quantity", \.quantity),
        .apple("type", \.type),
        .text("appAccountToken", \.appAccountToken),
        .apple("inAppOwnershipType", \.inAppOwnershipType),
        .date("signedDate", \.signedDate),
        .apple("revocationReason", \.revocationReason, merge: .revocation),
        .date("revocationDate", \.revocationDate, merge: .revocation),
        .flag("isUpgraded", \.isUpgraded, merge: .upgrade),
        .apple("offerType", \.offerType),
        .text("offerIdentifier", \.offerIdentifier),
        .apple("environment", \.environment),
        .text("storefront", \.storefront),
        .text("storefrontId", \.storefrontId),
        .apple("transactionReason", \.transactionReason),
        .integer("price", \.price, kind: .milliunits),
        .text("currency", \.currency),
        .apple("offerDiscountType", \.offerDiscountType),
        .text("appTransactionId", \.appTransactionId),
        .text("offerPeriod", \.offerPeriod),
        .apple("revocationType", \.revocationType, merge: .revocation),
        .integer("revocationPercentage", \.revocationPercentage, merge: .revocation),
        .json("advancedCommerceInfo", \.advancedCommerceInfo),
    ]

    /// The names of ``fields``.
    public static let fieldNames: Set<String> = Set(fields.map(\.name))
}

extension TransactionField {
    typealias Path<T> = WritableKeyPath<Transaction, T?> & Sendable

    static func text(_ name: String, _ path: Path<String>) -> TransactionField {
        TransactionField(
            name: name, kind: .text, merge: .fill, value: { $0[keyPath: path].map(FieldValue.text) },
            assign: { t, value in
                if case .text(let text)? = value { t[keyPath: path] = text } else if value == nil { t[keyPath: path] = nil }
            })
    }

    static func integer(_ name: String, _ path: Path<Int64>, kind: Kind = .integer, merge: MergeRule = .fill) -> TransactionField {
        TransactionField(
            name: name, kind: kind, merge: merge, value: { $0[keyPath: path].map(FieldValue.integer) },
            assign: { t, value in
                if case .integer(let number)? = value { t[keyPath: path] = number } else if value == nil { t[keyPath: path] = nil }
            })
    }

    static func int(_ name: String, _ path: Path<Int>) -> TransactionField {
        TransactionField(
            name: name, kind: .integer, merge: .fill, value: { $0[keyPath: path].map { .integer(Int64($0)) } },
            assign: { t, value in
                if case .integer(let number)? = value, let exact = Int(exactly: number) {
                    t[keyPath: path] = exact
                } else if value == nil {
                    t[keyPath: path] = nil
                }
            })
    }

    static func date(_ name: String, _ path: Path<Timestamp>, merge: MergeRule = .fill) -> TransactionField {
        TransactionField(
            name: name, kind: .date, merge: merge, value: { $0[keyPath: path].map(FieldValue.date) },
            assign: { t, value in
                if case .date(let date)? = value { t[keyPath: path] = date } else if value == nil { t[keyPath: path] = nil }
            })
    }

    static func flag(_ name: String, _ path: Path<Bool>, merge: MergeRule = .fill) -> TransactionField {
        TransactionField(
            name: name, kind: .flag, merge: merge, value: { $0[keyPath: path].map(FieldValue.flag) },
            assign: { t, value in
                if case .flag(let flag)? = value { t[keyPath: path] = flag } else if value == nil { t[keyPath: path] = nil }
            })
    }

    static func json(_ name: String, _ path: Path<JSONValue>) -> TransactionField {
        TransactionField(
            name: name, kind: .json, merge: .fill, value: { $0[keyPath: path].map(FieldValue.json) },
            assign: { t, value in
                if case .json(let json)? = value { t[keyPath: path] = json } else if value == nil { t[keyPath: path] = nil }
            })
    }

    static func apple<E: AppleEnum>(_ name: String, _ path: Path<E>, merge: MergeRule = .fill) -> TransactionField where E.Raw == String {
        TransactionField(
            name: name, kind: .text, merge: merge, value: { $0[keyPath: path].map { .text($0.rawValue) } },
            assign: { t, value in
                if case .text(let raw)? = value { t[keyPath: path] = E(rawValue: raw) } else if value == nil { t[keyPath: path] = nil }
            })
    }

    static func apple<E: AppleEnum>(_ name: String, _ path: Path<E>, merge: MergeRule = .fill) -> TransactionField where E.Raw == Int {
        TransactionField(
            name: name, kind: .integer, merge: merge, value: { $0[keyPath: path].map { .integer(Int64($0.rawValue)) } },
            assign: { t, value in
                if case .integer(let raw)? = value, let exact = Int(exactly: raw) {
                    t[keyPath: path] = E(rawValue: exact)
                } else if value == nil {
                    t[keyPath: path] = nil
                }
            })
    }
}

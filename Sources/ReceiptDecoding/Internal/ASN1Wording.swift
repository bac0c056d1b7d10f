import SwiftASN1

/// What a parser's error says to a person: an ASN.1 error as what is wrong with the bytes (its description names
/// the library's source file and line), anything else as it describes itself.
func plainWords(_ error: any Error) -> String {
    guard let asn1 = error as? ASN1Error else { return "\(error)" }
    switch asn1.code {
    case .truncatedASN1Field: return "the bytes end inside a field (the file is cut short)"
    case .unexpectedFieldType: return "a field is not of the type expected there"
    case .invalidASN1Object: return "its ASN.1 structure is invalid"
    case .invalidASN1IntegerEncoding: return "an integer is not encoded as DER requires"
    case .unsupportedFieldLength: return "a field's length is larger than this reader takes"
    case .invalidPEMDocument: return "it is not a valid PEM document"
    case .invalidStringRepresentation: return "a string field holds characters its type does not allow"
    case .tooFewOIDComponents: return "an object identifier has too few components"
    default: return "its ASN.1 is invalid (\(asn1.code))"
    }
}

/// The meaning of a verifyReceipt `status`, in Apple's documented terms, with what to do.
enum AppleStatus {
    static func meaning(_ status: Int64) -> String {
        switch status {
        case 0: return "the receipt is valid"
        case 21000: return "the request to the App Store was not an HTTP POST"
        case 21001: return "status 21001 is no longer sent by the App Store"
        case 21002: return "the receipt-data property was malformed or the service had a temporary issue; try again"
        case 21003: return "the receipt could not be authenticated"
        case 21004: return "the shared secret does not match the one on file for the account"
        case 21005: return "the receipt server was temporarily unable to provide the receipt; try again"
        case 21006: return "the receipt is valid but the subscription has expired"
        case 21007: return "the receipt is from the sandbox but was sent to production; verify it against the sandbox"
        case 21008: return "the receipt is from production but was sent to the sandbox; verify it against production"
        case 21009: return "internal data access error; try again later"
        case 21010: return "the user account cannot be found or has been deleted"
        case 21100...21199: return "internal data access error (\(status)); try again later"
        default: return "status \(status) is not one Apple documents"
        }
    }
}

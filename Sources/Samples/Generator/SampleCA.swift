import Crypto
import Foundation

/// The fixed signing chain of generated sample data: a TEST root (its subject says so, and that it is not
/// Apple's), an intermediate and a leaf shaped like Apple's (marker OIDs 1.2.840.113635.100.6.2.1 and
/// 1.2.840.113635.100.6.11.1), P-384 above a P-256 leaf.
///
/// The certificates are constants, made once from keys derived from the seed
/// `receiptdesk-sample-data-test-ca` (as ``TestCA`` derives its keys), because certificate signatures drawn
/// afresh would change the output of every run. Data signed with it verifies only with `--trust-root`
/// (or in demo mode): the private key is public, so the root must never be trusted for real data.
public enum SampleCA {
    /// `x5c`: leaf, intermediate, root as base64 DER.
    public static let x5c: [String] = [
        "MIICbzCCAfSgAwIBAgIBAzAKBggqhkjOPQQDAzCBlDE5MDcGA1UEAwwwUmVjZWlwdERlc2sgVEVTVCBJbnRlcm1lZGlhdGUgLSBzYW1wbGUgZGF0YSBvbmx5MSMwIQYDVQQLDBpURVNUIERBVEEgT05MWSAtIE5PVCBBUFBMRTElMCMGA1UECgwcUmVjZWlwdERlc2sgVGVzdCAobm90IEFwcGxlKTELMAkGA1UEBhMCVVMwHhcNMjAwMTAxMDAwMDAwWhcNNDUwMTAxMDAwMDAwWjCBlzE8MDoGA1UEAwwzUmVjZWlwdERlc2sgVEVTVCBSZWNlaXB0IFNpZ25pbmcgLSBzYW1wbGUgZGF0YSBvbmx5MSMwIQYDVQQLDBpURVNUIERBVEEgT05MWSAtIE5PVCBBUFBMRTElMCMGA1UECgwcUmVjZWlwdERlc2sgVGVzdCAobm90IEFwcGxlKTELMAkGA1UEBhMCVVMwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQJm09ubSopg2SUKRQCpjjmoxXdpuyHuk56+3R9KoOnOsZVy6wXHEfd900Lm2033Gy2c9/lHoIHDubvGUZF90+oozIwMDAMBgNVHRMBAf8EAjAAMA4GA1UdDwEB/wQEAwIHgDAQBgoqhkiG92NkBgsBBAIFADAKBggqhkjOPQQDAwNpADBmAjEAzNCR9kNPjU6yLCSEfPsvxbDWQNFCE9D7Kqpgw3f/qkVPiA/8YsTrCgHQWQe7QNArAjEAp4BWqRJMKsUKDLOkjT2LKEflpZeLPTHfPbOY3u4Pr/HqZ1jtITiJ/w79vGpZXh3G",
        "MIIClTCCAhugAwIBAgIBAjAKBggqhkjOPQQDAzCBmzFAMD4GA1UEAww3UmVjZWlwdERlc2sgVEVTVCBSb290IENBIC0gc2FtcGxlIGRhdGEgb25seSAtIE5PVCBBcHBsZTEjMCEGA1UECwwaVEVTVCBEQVRBIE9OTFkgLSBOT1QgQVBQTEUxJTAjBgNVBAoMHFJlY2VpcHREZXNrIFRlc3QgKG5vdCBBcHBsZSkxCzAJBgNVBAYTAlVTMB4XDTIwMDEwMTAwMDAwMFoXDTQ1MDEwMTAwMDAwMFowgZQxOTA3BgNVBAMMMFJlY2VpcHREZXNrIFRFU1QgSW50ZXJtZWRpYXRlIC0gc2FtcGxlIGRhdGEgb25seTEjMCEGA1UECwwaVEVTVCBEQVRBIE9OTFkgLSBOT1QgQVBQTEUxJTAjBgNVBAoMHFJlY2VpcHREZXNrIFRlc3QgKG5vdCBBcHBsZSkxCzAJBgNVBAYTAlVTMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEuQY4Xsh+dKasJiE+ST0maj86aidKdQtwZENMJde3K+LIxpNmY2ikx62chxuA5llgkUhGYwFmMYtB3hgsYXRZ9gfgMsGBVBMl/p1QidMe5oL+84RSHGOyUl+RzqqwLvfbozgwNjASBgNVHRMBAf8ECDAGAQH/AgEAMA4GA1UdDwEB/wQEAwIBBjAQBgoqhkiG92NkBgIBBAIFADAKBggqhkjOPQQDAwNoADBlAjBEEZpX0nOXDM7Z7SYU1KcuMVPXOfwvYJl8kpveeog7T+4flmCFZejVHf1WY3R09gUCMQCry5gr73IRNfQKMqdkUdmQa35ghPsetwA8i5YBpaIlJWqBwxg6mSj7v5idY5StCNg=",
        "MIIChzCCAg2gAwIBAgIBATAKBggqhkjOPQQDAzCBmzFAMD4GA1UEAww3UmVjZWlwdERlc2sgVEVTVCBSb290IENBIC0gc2FtcGxlIGRhdGEgb25seSAtIE5PVCBBcHBsZTEjMCEGA1UECwwaVEVTVCBEQVRBIE9OTFkgLSBOT1QgQVBQTEUxJTAjBgNVBAoMHFJlY2VpcHREZXNrIFRlc3QgKG5vdCBBcHBsZSkxCzAJBgNVBAYTAlVTMB4XDTIwMDEwMTAwMDAwMFoXDTQ1MDEwMTAwMDAwMFowgZsxQDA+BgNVBAMMN1JlY2VpcHREZXNrIFRFU1QgUm9vdCBDQSAtIHNhbXBsZSBkYXRhIG9ubHkgLSBOT1QgQXBwbGUxIzAhBgNVBAsMGlRFU1QgREFUQSBPTkxZIC0gTk9UIEFQUExFMSUwIwYDVQQKDBxSZWNlaXB0RGVzayBUZXN0IChub3QgQXBwbGUpMQswCQYDVQQGEwJVUzB2MBAGByqGSM49AgEGBSuBBAAiA2IABNct+m/tbnDXKCwW7RrjzOUaYkNaSD0bSpW/8Syzpq2nRf4Ym/GGTmXftPQfydE7O83IZM1N0I3SsljdqzDTR/Q5rWEky/kvwAa6WII4e2SOL2OoqIFlMWMWSZxA1KM0QKMjMCEwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZIzj0EAwMDaAAwZQIxANSDYqBqaSW2pN7vxtcLYjcQQO2sF9K9GWu5WnjXv2+IVK/kFJ47YS8t25hEsjgnOAIwcrP0l5AUY6I/lrwLOQMTFOjNSKVQ2kMFEGOZvrdf6q5Bl5mOFP4CAxIeT6nBQlW6",
    ]

    /// The leaf's private key (P-256, raw scalar): public test material.
    public static let leafKeyHex = "23ccfda5ab41224fe6567820cd9a0722d8e59381199e432cd2db2ee40d51c7f7"

    /// The leaf's private key.
    public static var leafKey: P256.Signing.PrivateKey {
        try! P256.Signing.PrivateKey(rawRepresentation: hexBytes(leafKeyHex))
    }

    /// The root certificate's DER.
    public static var rootDER: [UInt8] { [UInt8](Data(base64Encoded: x5c[2])!) }

    /// The leaf certificate's DER.
    public static var leafDER: [UInt8] { [UInt8](Data(base64Encoded: x5c[0])!) }

    /// The intermediate certificate's DER.
    public static var intermediateDER: [UInt8] { [UInt8](Data(base64Encoded: x5c[1])!) }

    /// The root as PEM, for `--trust-root`.
    public static var rootPEM: String {
        let body = x5c[2]
        var lines: [String] = []
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }
}

import Foundation
import Testing

/// `--verify-now` judges certificates at the moment the command runs instead of at each payload's
/// signedDate (DESIGN section 4). The corpus's real Apple-signed payloads were signed in 2022 and 2023
/// by a leaf valid until 2023-09-24 (SOURCES.md): good at their signedDate, expired now.
@Suite("--verify-now: certificates judged today, on decode, import and --files", .serialized, .ownThreads)
struct VerifyNowTests {
    static let notification = "\(Binary.corpus)/aporat__store-receipt-validator/test-notification-signed-payload.json"
    static let renewalInfo = "\(Binary.corpus)/awa__go-iap/EXTRACTED_validator_test.go_L326_sandbox-renewal-info.jws"
    static let leafValidity = "(valid 2021-08-25T02:50:34Z to 2023-09-24T02:50:33Z)"

    @Test("decode: verified at its signedDate; refused as certificateExpired with --verify-now")
    func decode() throws {
        for file in [Self.notification, Self.renewalInfo] {
            let atSigning = try Binary.run(["decode", "--json", file])
            #expect(atSigning.status == 0, "\(file): \(atSigning.stderr)")
            #expect(try Binary.json(atSigning.stdout)["verification"] as? String == "verified")

            let now = try Binary.run(["decode", "--json", "--verify-now", file])
            #expect(now.status == 1, "\(file)")
            let object = try Binary.json(now.stdout)
            #expect(object["status"] as? String == "rejected")
            #expect(object["verification"] as? String == "failed")
            let error = try #require(object["error"] as? [String: Any])
            #expect(error["code"] as? String == "certificateExpired")
            #expect((error["message"] as? String)?.hasPrefix("the leaf certificate is not valid at ") == true, "\(error)")
            #expect((error["message"] as? String)?.hasSuffix(Self.leafValidity) == true, "\(error)")
        }
    }

    @Test("import --verify-now rejects what import without it stores")
    func importCommand() throws {
        let refused = try Binary.run(["import", "--ledger", "sqlite:" + ImportCommandTests.temporary("now.sqlite"), "--verify-now", Self.renewalInfo])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("total: read 1 = imported 0 + duplicate 0 + rejected 1"), "\(refused.stdout)")
        #expect(refused.stderr.contains("rejected record #0 (byte 0): certificateExpired: the leaf certificate is not valid at"), "\(refused.stderr)")
        let stored = try Binary.run(["import", "--ledger", "sqlite:" + ImportCommandTests.temporary("signed.sqlite"), Self.renewalInfo])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout.contains("total: read 1 = imported 1 + duplicate 0 + rejected 0"), "\(stored.stdout)")
    }

    @Test("a read command with --files and --verify-now leaves the expired-leaf record out")
    func filesRead() throws {
        // The renewal info's customer is its original transaction id.
        let found = try Binary.run(["lookup", "2000000335310644", "--files", Self.renewalInfo, "--json"])
        #expect(found.status == 0, "\(found.stderr)")
        let missing = try Binary.run(["lookup", "2000000335310644", "--files", Self.renewalInfo, "--verify-now"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no customer matches 2000000335310644"), "\(missing.stderr)")
    }
}

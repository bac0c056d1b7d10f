import Foundation
import Ledger
import NIOSSL
import PostgresNIO

/// libpq's `sslmode`: whether the connection is encrypted and what of the server's certificate is checked.
///
/// As libpq defines them: `disable` never encrypts; `allow` and `prefer` encrypt when the server offers it and
/// check nothing; `require` always encrypts and checks nothing, unless a root certificate file is there (then it
/// checks as `verify-ca` does); `verify-ca` checks that the server's certificate chains to a root in
/// `sslrootcert`; `verify-full` checks that too, and that the certificate names the host the URL gives.
/// Over a unix socket there is no TLS: the mode is ignored, as libpq ignores it.
enum SSLMode: String, CaseIterable, Sendable {
    case disable
    /// libpq tries without TLS first; postgres-nio cannot, so this is `prefer` (which connects wherever `allow` would).
    case allow
    case prefer
    case require
    case verifyCA = "verify-ca"
    case verifyFull = "verify-full"

    /// Parses a value of the `sslmode` parameter (or `PGSSLMODE`, named by `source`).
    /// - Throws: `LedgerError.cannotOpen` naming `source` and the values libpq takes.
    init(parsing value: String, source: String) throws {
        guard let mode = SSLMode(rawValue: value) else {
            let shown = value.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 } ? "\"\(value.prefix(40))\"" : "a value"
            throw LedgerError.cannotOpen(
                "\(source) is \(shown), which libpq does not know: it takes "
                    + SSLMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self = mode
    }
}

/// Where the certificates that `verify-ca` and `verify-full` trust come from (libpq's `sslrootcert`).
enum RootCertificates: Equatable, Sendable {
    /// A PEM file of CA certificates.
    case file(String, explicit: Bool)
    /// `sslrootcert=system`: the operating system's trusted roots.
    case system
}

/// How a connection uses TLS: whether it asks for it, and what of the server's certificate it checks against which roots.
struct TLSPlan: Equatable, Sendable {
    enum Use: Equatable, Sendable {
        /// No TLS.
        case off
        /// TLS when the server offers it, else none.
        case prefer
        /// TLS or no connection.
        case require
    }

    enum Check: Equatable, Sendable {
        /// Any certificate (encryption against a passive listener only).
        case nothing
        /// The certificate chains to one of the roots.
        case chain
        /// It chains to a root and names the host connected to (a DNS name, or an IP address in its SAN).
        case chainAndHost
    }

    var use: Use
    var check: Check
    var roots: RootCertificates? = nil
}

extension PostgresURL {
    /// Reads `sslmode` and `sslrootcert` from the URL's parameters, else `PGSSLMODE` and `PGSSLROOTCERT`; the root
    /// file defaults to `~/.postgresql/root.crt`, as in libpq.
    /// - Throws: `LedgerError.cannotOpen` for an sslmode libpq does not know, `sslrootcert=system` with a mode
    ///   weaker than `verify-full` (libpq refuses it too), or client certificates (`sslcert`, `sslkey`), which this
    ///   build does not send.
    static func tlsSettings(parameters: [String: String], environment: [String: String]) throws -> (SSLMode?, RootCertificates?) {
        var mode: SSLMode?
        if let value = parameters["sslmode"] {
            mode = try SSLMode(parsing: value, source: "the sslmode parameter of the postgres:// URL")
        } else if let value = environment["PGSSLMODE"], !value.isEmpty {
            mode = try SSLMode(parsing: value, source: "PGSSLMODE")
        }
        for name in ["sslcert", "sslkey"] where parameters[name] != nil {
            throw LedgerError.cannotOpen(
                "the \(name) parameter of the postgres:// URL asks for a client certificate, which this receiptdesk does not send; use a password (PGPASSWORD or ~/.pgpass)")
        }
        var roots: RootCertificates?
        let given = parameters["sslrootcert"] ?? environment["PGSSLROOTCERT"].flatMap { $0.isEmpty ? nil : $0 }
        if let given {
            guard !given.isEmpty else {
                throw LedgerError.cannotOpen("the sslrootcert parameter of the postgres:// URL is empty: give a CA file's path, or system")
            }
            roots = given == "system" ? .system : .file(given, explicit: true)
        } else if let home = environment["HOME"], !home.isEmpty {
            roots = .file(home + "/.postgresql/root.crt", explicit: false)
        }
        if roots == .system {
            // libpq: sslrootcert=system makes verify-full the default and refuses anything weaker.
            if let mode, mode != .verifyFull {
                throw LedgerError.cannotOpen(
                    "sslmode \(mode.rawValue) may not be used with sslrootcert=system (the system's roots vouch for a name, so use sslmode=verify-full)")
            }
            mode = .verifyFull
        }
        return (mode, roots)
    }

    /// What TLS this URL's TCP connection is to use, and what it checks: libpq's table, as a value.
    ///
    /// No sslmode: off for a loopback address, else `prefer`. Checking a certificate needs roots: the
    /// `sslrootcert` file (or libpq's default `~/.postgresql/root.crt`), or `system`.
    /// - Throws: `LedgerError.cannotOpen` naming `sslrootcert` when `verify-ca` or `verify-full` has no roots.
    func tlsPlan() throws -> TLSPlan {
        let mode = sslMode ?? (isLoopback ? .disable : .prefer)
        switch mode {
        case .disable:
            return TLSPlan(use: .off, check: .nothing, roots: nil)
        case .allow, .prefer:
            return TLSPlan(use: .prefer, check: .nothing, roots: nil)
        case .require:
            // libpq: "if a root CA file exists, verify the certificate in the same way as if verify-ca was specified".
            if case .file(let path, let explicit) = rootCertificates, explicit || FileManager.default.fileExists(atPath: path) {
                return TLSPlan(use: .require, check: .chain, roots: rootCertificates)
            }
            return TLSPlan(use: .require, check: .nothing, roots: nil)
        case .verifyCA:
            return TLSPlan(use: .require, check: .chain, roots: try requiredRoots(mode))
        case .verifyFull:
            return TLSPlan(use: .require, check: .chainAndHost, roots: try requiredRoots(mode))
        }
    }

    /// The TLS postgres-nio is to use (``tlsPlan()``), its root certificates loaded now.
    /// - Throws: `LedgerError.cannotOpen` naming `sslrootcert` when the file cannot be read or holds no PEM
    ///   certificate, or when `verify-ca`/`verify-full` has no roots at all.
    func tls() throws -> PostgresConnection.Configuration.TLS {
        let plan = try tlsPlan()
        let verification: CertificateVerification =
            switch plan.check {
            case .nothing: .none
            case .chain: .noHostnameVerification
            case .chainAndHost: .fullVerification
            }
        switch plan.use {
        case .off: return .disable
        case .prefer: return .prefer(try Self.context(verification: verification, roots: plan.roots))
        case .require: return .require(try Self.context(verification: verification, roots: plan.roots))
        }
    }

    private func requiredRoots(_ mode: SSLMode) throws -> RootCertificates {
        guard let rootCertificates else {
            throw LedgerError.cannotOpen(
                "sslmode \(mode.rawValue) checks the server's certificate and needs the CA that issued it: give sslrootcert=PATH (or system)")
        }
        return rootCertificates
    }

    /// A client TLS context; with `roots`, trusting only those (a file's certificates, or the system's).
    static func context(verification: CertificateVerification, roots: RootCertificates?) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = verification
        switch roots {
        case .file(let path, _):
            configuration.trustRoots = .certificates(try rootCertificates(path))
        case .system, nil:
            configuration.trustRoots = .default
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw LedgerError.cannotOpen("cannot set up TLS: \(error)")
        }
    }

    /// The CA certificates of a PEM file named by `sslrootcert`.
    /// - Throws: `LedgerError.cannotOpen` naming the parameter and the path when the file cannot be read or holds
    ///   no PEM certificate.
    static func rootCertificates(_ path: String) throws -> [NIOSSLCertificate] {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        guard exists, !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            let reason = !exists ? "does not exist" : isDirectory.boolValue ? "is a directory" : "cannot be read"
            throw LedgerError.cannotOpen(
                "the sslrootcert file \(path) \(reason): give the CA certificate (PEM) that issued the server's, or system for the system's roots")
        }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(Array(data))
        } catch {
            throw LedgerError.cannotOpen("the sslrootcert file \(path) is not PEM certificates: \(error)")
        }
        guard !certificates.isEmpty else {
            throw LedgerError.cannotOpen("the sslrootcert file \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return certificates
    }
}

import AsyncHTTPClient
import FormPostReceiving
import NIOConcurrencyHelpers
import NIOPosix
import NIOSSL

extension ObjectStorage {
    /// The clients of object storage that trust the CA certificates of the PEM file at
    /// `path` instead of the system's, as AWS's SDKs do with `AWS_CA_BUNDLE` (a store
    /// behind a private CA: Ceph's RADOS Gateway or MinIO on an internal network): one for
    /// the requests, one for the leases, made as ``defaultClient`` and
    /// ``defaultLeaseClient`` are; STS is asked with the first. The container's and the
    /// instance's credential endpoints are reached with the system's trust, as AWS's SDKs
    /// reach them. Made once per file and process, on first use; never shut down.
    ///
    /// - Throws: `ObjectStorageError/unreadableCABundle(path:detail:)` when the file holds no
    ///   PEM certificate that can be read.
    public static func clients(trustingCABundle path: String) throws -> (client: HTTPClient, leaseClient: HTTPClient) {
        try CABundleClients.shared.withLockedValue { made in
            if let clients = made[path] { return clients }
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw ObjectStorageError.unreadableCABundle(path: path, detail: "\(error)")
            }
            guard !certificates.isEmpty else {
                throw ObjectStorageError.unreadableCABundle(path: path, detail: "the file holds no PEM certificate")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(certificates)
            let clients = (newClient(tls: tls), newClient(tls: tls))
            made[path] = clients
            return clients
        }
    }
}

/// The clients made for each CA bundle, kept for the process's life.
private enum CABundleClients {
    static let shared = NIOLockedValueBox<[String: (client: HTTPClient, leaseClient: HTTPClient)]>([:])
}

/// The lease a request holds on an upload in object storage, as its holder renews it: the
/// latest is the one released.
final class HeldLease {
    var lease: S3Lease

    init(_ lease: S3Lease) {
        self.lease = lease
    }
}

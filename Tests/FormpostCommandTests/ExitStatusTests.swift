import Foundation
@testable import FormPost
@testable import FormpostCommand
import Testing

/// The command's exit codes for failures as Network.framework reports them (Apple
/// platforms): the same as curl's, as for NIOPosix's errors.
@Suite struct ExitStatusTests {
    @Test func networkFrameworkFailuresExitAsCurlDoes() {
        func status(_ failure: NetworkFrameworkFailure) -> FormpostCommand.ExitStatus { FormpostCommand.ExitStatus.forError(failure.error(host: "h", port: 1)) }
        #expect(status(.posix(ECONNREFUSED)) == .cannotConnect)
        #expect(status(.posix(ENETUNREACH)) == .cannotConnect)
        #expect(status(.posix(ETIMEDOUT)) == .timedOut)
        #expect(status(.dns(-65554)) == .cannotResolve)
        #expect(status(.tls(-9808)) == .untrustedCertificate)
        #expect(status(.tls(-9843)) == .untrustedCertificate)
        #expect(status(.tls(-9824)) == .tlsHandshakeFailed)
    }

    @Test func unsupportedConfigurationIsAUsageError() {
        #expect(FormpostCommand.ExitStatus.forError(UploadError.unsupportedConfiguration("x")) == FormpostCommand.ExitStatus.usage)
    }
}

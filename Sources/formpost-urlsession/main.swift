import FormPostURLSession
import FormpostCommand
#if canImport(FoundationNetworking)
import FoundationNetworking
#else
import Foundation
#endif

// `formpost` with `--transport urlsession` available: where URLSession brings
// FoundationNetworking (libcurl on Linux), `formpost` hands such commands to this executable
// so that it does not load them itself.
URLSessionTransportFactory.install { connectTimeout in
    let configuration = URLSessionConfiguration.default
    if let connectTimeout { configuration.timeoutIntervalForRequest = connectTimeout }
    let session = URLSessionTransport(configuration: configuration)
    return (session, { session.invalidate() })
}

await Formpost.start()

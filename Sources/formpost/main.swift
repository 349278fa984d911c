import FormpostCommand
#if canImport(Darwin)
import Foundation
import FormPostURLSession

// On Apple platforms URLSession is the system's: `--transport urlsession` costs nothing to offer.
URLSessionTransportFactory.install { connectTimeout in
    let configuration = URLSessionConfiguration.default
    if let connectTimeout { configuration.timeoutIntervalForRequest = connectTimeout }
    let session = URLSessionTransport(configuration: configuration)
    return (session, { session.invalidate() })
}
#endif

await Formpost.start()

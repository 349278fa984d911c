import Foundation
import FormPost

/// Why a Foundation serialization failed, as a reason for ``UploadError/decodingFailed(_:body:)``:
/// `JSONSerialization` and `PropertyListSerialization` say it in the `NSError`'s debug
/// description ("Invalid value around line 1, column 0."); `Decodable` errors name their path.
enum FoundationErrorDescription {
    static func describe(_ error: any Error) -> String {
        if !(error is DecodingError), let debug = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String { return debug }
        return UploadResponse.describe(error)
    }
}

// FormPostServer is the receivers on Hummingbird; an app that imports it has the receiving
// core, object storage over S3 and the hooks as well, as before they were modules apart.
@_exported import FormPostHooks
@_exported import FormPostReceiving
@_exported import FormPostS3

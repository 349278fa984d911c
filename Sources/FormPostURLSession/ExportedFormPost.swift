import FormPost
/// FormPost comes with FormPostURLSession, so that one import brings the client and what this module adds.
@_exported import FormPost

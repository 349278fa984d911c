/// FormPost comes with FormPostFoundation, so that one import brings the client and what this module adds.
@_exported import FormPost

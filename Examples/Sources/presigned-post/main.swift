import Foundation
import FormPost
import Multipart

// presigned-post FILE [URL]: the file with the fields a service signed (placeholders here, in
// the shape S3 hands them out), posted to URL; without one, the request it would send.
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: presigned-post FILE [URL]")
    exit(2)
}
let post = PresignedPost(
    url: URL(string: arguments.count > 2 ? arguments[2] : "https://example-bucket.s3.amazonaws.com/")!,
    fields: [
        ("key", "uploads/${filename}"),
        ("x-amz-algorithm", "AWS4-HMAC-SHA256"),
        ("x-amz-credential", "AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/s3/aws4_request"),
        ("x-amz-date", "20260101T000000Z"),
        ("policy", "eyJleHBpcmF0aW9uIjoiMjAyNi0wMS0wMVQwMTowMDowMFoifQ=="),
        ("x-amz-signature", "3f0c1e…"),
    ]
)
if arguments.count > 2 {
    let response = try await post.upload(fileAt: arguments[1])   // throws UploadError unless 200, 201 or 204
    print(response.status)
} else {
    let plan = try post.form(fileAt: arguments[1]).plan()
    let head = "POST \(post.url.absoluteString)\nContent-Type: \(plan.contentType)\nContent-Length: \(plan.contentLength ?? 0)\n\n"
    FileHandle.standardOutput.write(Data(head.utf8) + Data(try await plan.encodedBytes()))   // the body's exact bytes
}

/// How a form is turned into the bytes that are sent.
public enum EncodingStrategy: Sendable, Equatable {
    /// Forms whose length is known and at most `threshold` bytes are encoded in memory;
    /// larger ones stream from the plan (no temporary file). The default, with 10 MB.
    case automatic(threshold: Int64)
    /// Always encode in memory first.
    case inMemory
    /// Always stream from the plan.
    case streaming
    /// Encode to a file under the temporary directory, upload from it, then remove it
    /// (on success, failure and cancellation alike) — Alamofire's behaviour above its threshold.
    case temporaryFile

    /// `.automatic(threshold: 10_000_000)`, as Alamofire's `encodingMemoryThreshold`.
    public static let `default` = EncodingStrategy.automatic(threshold: 10_000_000)
}

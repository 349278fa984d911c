import FormPost
/// Where a `BodyStreamPump` writes a body's bytes: on Apple platforms the output end of a
/// bound stream pair whose input end URLSession reads (``OutputStreamSink``); in tests, memory.
///
/// A sink is used by the pump's thread only, and its calls may block that thread.
protocol BodyStreamSink: AnyObject {
    /// Prepares the sink before the first write; called once, on the pump's thread.
    func open()

    /// Writes some of `bytes` (never empty) and returns how many were taken: at least 1, or
    /// 0 or -1 when the sink takes no more (its reader is gone), which ends the pump.
    /// May block until the reader has made room.
    func write(_ bytes: UnsafeRawBufferPointer) -> Int

    /// Marks the end of the body: the reader sees its end. Called only once the whole body
    /// was written — never after a failure or a stop, so that a reader never takes a cut
    /// body for a complete one.
    func close()
}

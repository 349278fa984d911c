import CMultipartSystem

/// Random bits from the system's cryptographic generator, 128 at a time in one call: the
/// standard library's `SystemRandomNumberGenerator` makes a system call for every 64 bits.
enum SystemRandomBytes {
    /// 128 random bits.
    static func next128() -> (low: UInt64, high: UInt64) {
        var words: (UInt64, UInt64) = (0, 0)
        let filled = withUnsafeMutableBytes(of: &words) { cmultipart_random_bytes($0.baseAddress!, $0.count) == 0 }
        guard filled else {
            // No kernel generator (a kernel before 3.17, or a filter that refuses the call):
            // the standard library's, which has fallbacks of its own.
            var generator = SystemRandomNumberGenerator()
            return (generator.next(), generator.next())
        }
        return words
    }
}

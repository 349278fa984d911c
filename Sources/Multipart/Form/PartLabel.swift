/// Names a part in errors: its position in the form (from 1) and its field name.
public struct PartLabel: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The part's position in the form, counted from 1.
    public let position: Int
    /// The part's field name (the `name` of its `Content-Disposition`), if it has one.
    public let name: String?

    /// Creates a label for the part at `position` (from 1) with field `name`.
    public init(position: Int, name: String?) {
        self.position = position
        self.name = name
    }

    public var description: String {
        if let name { return "part \(position) (\"\(name)\")" }
        return "part \(position)"
    }
}

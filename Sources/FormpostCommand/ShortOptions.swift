/// curl's short options with their value attached (`-Fa=1`, `-HAccept:x`, `-o-`), split in
/// two before parsing: swift-argument-parser would read `-Fa=1` as an option `-Fa`.
enum ShortOptions {
    /// The short options that take a value.
    static let takingValues: Set<Character> = ["F", "H", "X", "o", "T", "u", "A", "x", "E", "D", "w"]

    static func split(_ arguments: [String]) -> [String] {
        var result: [String] = []
        for (index, argument) in arguments.enumerated() {
            if argument == "--" {
                result += arguments[index...]
                break
            }
            let characters = Array(argument)
            if characters.count > 2, characters[0] == "-", characters[1] != "-", takingValues.contains(characters[1]) {
                result += ["-" + String(characters[1]), String(characters[2...])]
            } else {
                result.append(argument)
            }
        }
        return result
    }
}

/// A command line's positional arguments and its `--name VALUE` options, as the commands that talk to a
/// running server take them (`hearth feed`, `hearth hooks`).
struct CommandArguments {
    var positional: [String] = []
    var options: [String: String] = [:]

    /// Splits `arguments`; nil, having said which option lacks its value, when one does.
    static func parse<ErrorOutput: TextOutputStream>(
        _ arguments: [String], valueOptions: Set<String>, command: String, errorOutput: inout ErrorOutput
    ) -> CommandArguments? {
        var parsed = CommandArguments()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if valueOptions.contains(argument) {
                guard index + 1 < arguments.count else {
                    print("hearth \(command): \(argument) needs a value.", to: &errorOutput)
                    return nil
                }
                parsed.options[argument] = arguments[index + 1]
                index += 2
                continue
            }
            parsed.positional.append(argument)
            index += 1
        }
        return parsed
    }
}

import HearthSupport

public enum HearthCommand {
    public static func main(_ arguments: [String]) {
        print("hearth \(HearthVersion.string)")
    }
}

/// The version printed by `hearth --version` and sent in server headers.
public enum HearthVersion {
    public static let string = "0.1.0-dev"
}

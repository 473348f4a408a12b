/// One SQL statement and its parameters, all sent in binary (`PostgresBinary`), so no value is ever
/// spliced into SQL text.
///
///     PostgresStatement("DELETE FROM hearth_records WHERE namespace = $1", [.text("demo")])
public struct PostgresStatement: Sendable {
    public var sql: String
    public var parameters: [PostgresParameter]

    public init(_ sql: String, _ parameters: [PostgresParameter] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}

/// A parameter's type and binary value (nil for SQL NULL). Made only through the static functions, one
/// per type Hearth binds; an optional value that is nil is a NULL of that type.
///
///     [.text(user.email), .int8(issuedAt), .bytea(hash), .boolean(revoked)]
public struct PostgresParameter: Sendable {
    var type: PostgresBinary.TypeID
    var bytes: [UInt8]?

    init(type: PostgresBinary.TypeID, bytes: [UInt8]?) {
        self.type = type
        self.bytes = bytes
    }

    /// UTF-8 text. PostgreSQL's `text` cannot hold U+0000: a string with one is refused by the server.
    public static func text(_ value: String?) -> PostgresParameter {
        PostgresParameter(type: .text, bytes: value.map { Array($0.utf8) })
    }

    /// A `bigint`.
    public static func int8(_ value: Int64?) -> PostgresParameter {
        PostgresParameter(type: .int8, bytes: value.map(PostgresBinary.int64))
    }

    /// A `bytea`.
    public static func bytea(_ value: [UInt8]?) -> PostgresParameter { PostgresParameter(type: .bytea, bytes: value) }

    /// A `boolean`.
    public static func boolean(_ value: Bool?) -> PostgresParameter {
        PostgresParameter(type: .boolean, bytes: value.map(PostgresBinary.boolean))
    }

    /// An array already encoded by `PostgresBinary.ArrayEncoder`.
    static func array(_ type: PostgresBinary.TypeID, _ encoded: [UInt8]) -> PostgresParameter {
        PostgresParameter(type: type, bytes: encoded)
    }
}

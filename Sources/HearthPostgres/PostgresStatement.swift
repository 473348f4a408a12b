/// One SQL statement and its parameters, all sent in binary (`PostgresBinary`), so no value is ever
/// spliced into SQL text.
///
///     PostgresStatement("DELETE FROM hearth_records WHERE namespace = $1", [.text("demo")])
struct PostgresStatement: Sendable {
    var sql: String
    var parameters: [PostgresParameter]

    init(_ sql: String, _ parameters: [PostgresParameter] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}

/// A parameter's type and binary value (nil for SQL NULL).
struct PostgresParameter: Sendable {
    var type: PostgresBinary.TypeID
    var bytes: [UInt8]?

    static func text(_ value: String) -> PostgresParameter { PostgresParameter(type: .text, bytes: Array(value.utf8)) }
    static func int8(_ value: Int64) -> PostgresParameter { PostgresParameter(type: .int8, bytes: PostgresBinary.int64(value)) }
    static func bytea(_ value: [UInt8]) -> PostgresParameter { PostgresParameter(type: .bytea, bytes: value) }
    /// An array already encoded by `PostgresBinary.ArrayEncoder`.
    static func array(_ type: PostgresBinary.TypeID, _ encoded: [UInt8]) -> PostgresParameter {
        PostgresParameter(type: type, bytes: encoded)
    }
}

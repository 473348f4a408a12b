extension Node {
    /// Reads a JSON document into a node (docs/protocol.md §5.1).
    ///
    /// `null` is the empty node; objects become children in Firebase key order; arrays become
    /// children keyed `"0"`, `"1"`, …; empty children are dropped and an object left without
    /// children is empty. `.priority`, `.value` and `.sv` keys carry priorities, prioritized leaves
    /// and server-value placeholders. See `JSONParser` for the exact rules and error choices.
    ///
    ///     try Node(json: #"{"b": 2, "a": [true, null, "x"]}"#)   // a: {0: true, 2: "x"}, b: 2
    ///
    /// - Throws: `DataError` with code `.invalidJSON` and a `byteOffset` for syntax errors, or the
    ///   code of the Firebase rule the data breaks.
    public init(json: String, options: JSONParseOptions = .init()) throws(DataError) {
        var json = json
        let result = json.withUTF8 { bytes -> Result<Node, DataError> in
            do throws(DataError) {
                return .success(try Node(jsonBytes: UnsafeRawBufferPointer(bytes), options: options))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// Reads JSON from UTF-8 bytes; see `init(json:options:)`.
    public init(jsonBytes bytes: [UInt8], options: JSONParseOptions = .init()) throws(DataError) {
        let result = bytes.withUnsafeBytes { raw -> Result<Node, DataError> in
            do throws(DataError) {
                return .success(try Node(jsonBytes: raw, options: options))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// Reads JSON from UTF-8 bytes, which must stay valid for the call; see `init(json:options:)`.
    public init(jsonBytes bytes: UnsafeRawBufferPointer, options: JSONParseOptions = .init()) throws(DataError) {
        if let plain = JSONPlainScalar.plainDocument(bytes) {
            // A written scalar is checked as the parser checks it before its value: the path only.
            if case .write(let path) = options.validation { try KeyValidation.validate(writePath: path) }
            self = plain
            return
        }
        var parser = JSONParser(bytes: bytes, options: options)
        self = try parser.parseDocument()
    }
}

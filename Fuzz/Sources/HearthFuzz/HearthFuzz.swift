import HearthFuzzing

#if canImport(Glibc)
    import Glibc
#endif

// libFuzzer's driver (compiler-rt, linked by -sanitize=fuzzer): parses its options, runs the corpus,
// then calls `callback` with each input it makes up.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target chosen on the command line; set once before the driver starts.
nonisolated(unsafe) var selected: FuzzTarget?

/// libFuzzer's entry point (its own `main`, which SwiftPM's entry point replaces, refers to it).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selected?.run(bytes)
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `<module>_main`): `hearth-fuzz TARGET options…`.
@_cdecl("HearthFuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    let arguments = (0..<Int(argc)).map { argv[$0].map { String(cString: $0) } ?? "" }
    guard arguments.count >= 2, let target = FuzzTarget.named(arguments[1]) else {
        var text = "usage: hearth-fuzz TARGET [libFuzzer options] [corpus directories]\ntargets:\n"
        for target in FuzzTarget.all { text += "  \(target.name)\t\(target.input)\n" }
        _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        return arguments.count >= 2 && arguments[1] == "--list" ? 0 : 64
    }
    selected = target
    // The driver sees the program name and the options after the target.
    var count = argc - 1
    argv[1] = argv[0]
    var shifted = argv + 1
    return LLVMFuzzerRunDriver(&count, &shifted, testOneInput)
}

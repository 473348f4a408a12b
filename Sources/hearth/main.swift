#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import HearthCLI

exit(HearthCommand.main(CommandLine.arguments))

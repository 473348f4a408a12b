#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import HearthCLI

// Files the process creates are its owner's alone unless a command says otherwise: data files, backups
// and rules hold data that the security rules guard (see OwnerOnlyFiles).
umask(0o077)
exit(HearthCommand.main(CommandLine.arguments))

import HearthCLI
HearthCommand.main(CommandLine.arguments)

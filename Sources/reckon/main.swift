import Foundation

exit(Commands.main(Array(CommandLine.arguments.dropFirst())).rawValue)

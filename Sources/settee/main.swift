import Foundation
import SetteeCLI

exit(SetteeCLI.main(Array(CommandLine.arguments.dropFirst())))

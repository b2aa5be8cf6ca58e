import Foundation
import SetteeCLI

// The arguments as the bytes the shell passed: `CommandLine.arguments` would replace
// invalid UTF-8 with U+FFFD, and Settee must refuse it instead.
let arguments = (1..<Int(CommandLine.argc)).map { index -> [UInt8] in
  guard let argument = CommandLine.unsafeArgv[index] else { return [] }
  return Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map {
    UInt8(bitPattern: $0)
  }
}
exit(await SetteeCLI.main(rawArguments: arguments))

import Foundation
import SetteeCLI
import SetteeNetCLI

// `settee-net`: the `settee` tool with the commands that speak HTTP (`serve`, `replicate`,
// `replicator`) and `bench`; `settee` hands those over to it (NetworkCommands).
SetteeNetCLI.runTasksOnEventLoops()
SetteeNetCLI.registerCommands()
let arguments = (1..<Int(CommandLine.argc)).map { index -> [UInt8] in
  guard let argument = CommandLine.unsafeArgv[index] else { return [] }
  return Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map {
    UInt8(bitPattern: $0)
  }
}
exit(await SetteeCLI.main(rawArguments: arguments))

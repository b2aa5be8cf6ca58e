// swift-tools-version:6.1
// A user's package: it depends on Settee by path and holds the README's Swift code,
// extracted by extract-readme.sh (CI runs it), so the README cannot drift from what builds.
import Foundation
import PackageDescription

let package = Package(
  name: "ReadmeCheck",
  platforms: [.macOS(.v13), .iOS(.v16)],
  dependencies: [.package(name: "Settee", path: "../..")],
  targets: [
    .executableTarget(
      name: "ReadmeCheck",
      dependencies: [
        .product(name: "Settee", package: "Settee"),
        .product(name: "SetteeReplication", package: "Settee"),
        .product(name: "SetteeJavaScript", package: "Settee"),
      ]),
    .executableTarget(
      name: "TopLevelAwait", dependencies: [.product(name: "Settee", package: "Settee")]),
  ],
  swiftLanguageModes: [.v6]
)

// Code that must not compile, built only when CI asks (`SETTEE_CHECK_MISTAKES=1`).
if ProcessInfo.processInfo.environment["SETTEE_CHECK_MISTAKES"] != nil {
  package.targets.append(
    .executableTarget(
      name: "TopLevelAwaitMistake", dependencies: [.product(name: "Settee", package: "Settee")],
      path: "Mistakes/TopLevelAwaitMistake"))
}

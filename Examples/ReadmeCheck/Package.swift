// swift-tools-version:6.1
// A user's package: it depends on Settee by path and holds the README's Swift code,
// extracted by extract-readme.sh (CI runs it), so the README cannot drift from what builds.
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
      ])
  ],
  swiftLanguageModes: [.v6]
)
